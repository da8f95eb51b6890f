"""The presentation of ``rfbench precision``: the rows printed after a run, its chart's view."""

from __future__ import annotations

import pandas as pd

from rfbench.present.summaries import View, register_presentation

VIEW = View(
    metric="dtype_to_mc",
    x="r",
    where={"form": ("logspace",), "weights": ("iid",)},
    aggregate=("theta",),
    spread=False,
)
"""The chart: the error the dtype adds, in units of the Monte Carlo error, per dtype, over r; the
median over angles (as the paper-style figure beyond-precision-error shows it), for rfbench's
log-space form and the IID couplings (the couplings change little; beyond-precision maps all)."""


@register_presentation("precision", VIEW)
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per dtype and form: the smallest r with a non-finite kernel estimate, per estimator."""
    bad = results[(results["metric"] == "nonfinite_fraction") & (results["value"] > 0)]
    first = bad.groupby(["dtype", "form", "estimator"])["r"].min().rename("first_bad_r")
    return first.reset_index().sort_values(["dtype", "form", "first_bad_r"]).head(20)
