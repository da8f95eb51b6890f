"""The terminal summary of ``rfbench cost``: a few headline rows printed after a run."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfbench.compute.names import weights_of


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


def projection_crossover(results: pd.DataFrame) -> pd.DataFrame:
    """Per coupling, the smallest d from which the structured projection is faster than the
    dense one at every larger measured d (NaN if it never is).

    Parameters
    ----------
    results : DataFrame
        Rows of ``rfbench cost``; only ``part == "projection"`` rows are used.

    Returns
    -------
    DataFrame with columns ``weights``, ``crossover_d`` and ``speedup_at_max_d`` (dense / structured
    time at the largest d).
    """
    rows = results[(results["part"] == "projection") & (results["metric"] == "time_s")]
    out = []
    for weights, group in rows.groupby("weights", sort=False):
        wide = group.pivot_table(index="d", columns="step", values="value").sort_index()
        faster = (wide["structured"] < wide["dense"]).to_numpy()
        cross = np.nan
        for i in range(len(faster) - 1, -1, -1):
            if not faster[i]:
                break
            cross = float(wide.index[i])
        top = wide.iloc[-1]
        out.append({"weights": weights, "crossover_d": cross,
                    "speedup_at_max_d": float(top["dense"] / top["structured"])})  # fmt: skip
    return pd.DataFrame(out, columns=["weights", "crossover_d", "speedup_at_max_d"])
