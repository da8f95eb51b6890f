"""The presentation of ``rfbench cost``: the rows printed after a run, its chart's view."""

from __future__ import annotations

import pandas as pd

from rfbench.compute.text import weights_of
from rfbench.present.statistics import projection_crossover
from rfbench.present.summaries import View, register_presentation

VIEW = View(
    metric="rms_rel_frob",
    x="time_s",
    x_metric="time_s",
    where={"part": ("frontier",), "step": ("total", None)},
    y_log=True,
)
"""The chart: the error-cost frontier, error against wall time, one curve per estimator through
its m."""


@register_presentation("cost", VIEW)
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Crossover L* at each d, per estimator (FLOP model, target error); for the Hadamard
    couplings also the dimension from which the structured projection beats the dense one
    (``structured_from_d``) and its speed-up at the largest d timed."""
    rows = results[results["metric"] == "crossover_L"]
    table = rows.pivot_table(index="estimator", columns="d", values="value").round(0)
    table = table.reset_index().rename_axis(columns=None)
    if "part" not in results or not (results["part"] == "projection").any():
        return table
    cross = projection_crossover(results).set_index("weights")
    weights = table["estimator"].map(weights_of)
    extra = pd.DataFrame({"estimator": cross.index.map(lambda w: f"@{w} projection")})
    table = pd.concat([table, extra], ignore_index=True)
    weights = pd.concat([weights, pd.Series(list(cross.index))], ignore_index=True)
    table["structured_from_d"] = weights.map(cross["crossover_d"]).to_numpy()
    table["speedup_at_max_d"] = weights.map(cross["speedup_at_max_d"]).round(1).to_numpy()
    return table
