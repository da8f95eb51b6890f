"""The terminal summary of ``rfbench precision``: a few headline rows printed after a run."""

from __future__ import annotations

import pandas as pd


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per dtype and form: the smallest r with a non-finite kernel estimate, per estimator."""
    bad = results[(results["metric"] == "nonfinite_fraction") & (results["value"] > 0)]
    first = bad.groupby(["dtype", "form", "estimator"])["r"].min().rename("first_bad_r")
    return first.reset_index().sort_values(["dtype", "form", "first_bad_r"]).head(20)
