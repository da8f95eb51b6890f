"""The presentation of ``rfbench pointwise``: the rows printed after a run."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfbench.compute.schema import better
from rfbench.present.summaries import register_presentation


@register_presentation("pointwise")
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per curve: max over θ of the closed-form and empirical relative RMSE (the HRF claim:
    the angular hybrid has the smallest max-relative-error), whether the sample resolves it
    (at the empirical and the closed-form argmax), the importance-sampled max where run, the
    relative mean absolute error and the negative count; ranked at each r (lower is better) by
    the closed form when every curve there has one, else all by the empirical max. The footnote
    (``attrs``) explains the marks.
    """
    keys = [c for c in ("estimator", "variant", "m", "n", "r") if c in results.columns]
    out = []
    for key, df in results.groupby(keys, dropna=False, sort=False):
        emp = df[df["metric"] == "rel_rmse"]
        if emp.empty:
            continue
        row = dict(zip(keys, key, strict=True))
        flags = _max_flags(df, emp)
        row.update(
            theory_max=_max_of(df, "theory_rel_rmse"),
            max_rel_rmse=emp["value"].max(),
            resolved=_all_resolved(flags),
            is_max=_max_of(df, "is_rel_rmse"),
            max_rel_mae=_max_of(df, "rel_mae"),
            neg_count=_max_of(df, "neg_count"),
        )
        out.append(row)
    table = pd.DataFrame(out)
    if table.empty:
        return table
    by_r = table["r"].fillna(-1.0)  # the user's pairs (no r) rank together
    # like with like: at one r, by the closed-form max when every curve has one, else all by the
    # empirical max (a plugin copy without a closed form must not outrank its original)
    closed = table["theory_max"].notna().groupby(by_r).transform("all")
    table["ranked_by"] = np.where(closed, "theory", "empirical")
    order = table["theory_max"].where(closed, table["max_rel_rmse"])
    table["rank"] = order.groupby(by_r).rank(method="min").astype(int)
    front = [*keys, "rank", "ranked_by"]
    table = table[front + [c for c in table.columns if c not in front]]
    table = table.sort_values(["r", "rank"], kind="stable").head(20).reset_index(drop=True)
    table.attrs["footnote"] = SUMMARY_FOOTNOTE
    table.attrs["caption"] = (
        f"the max over θ of the relative RMSE per curve ({better('rel_rmse')}), ranked 1 = best "
        "at each r"
    )
    return table


#: Printed under the pointwise summary (rfbench.cli.show.print_frame).
SUMMARY_FOOTNOTE = (
    "rank (1 = lowest error): at each r by the closed-form max theory_max when every curve has "
    "one, else all by the empirical max_rel_rmse (ranked_by). resolved = False: at the angle of "
    "the empirical or the closed-form max (without a closed form: at some angle) fewer than 30 "
    "draws are expected in the region carrying the MSE "
    "(rfbench.compute.features.theory.resolution), so max_rel_rmse is unreliable "
    "(typically far too small, sometimes one huge outlier); the rows' samples_needed says how "
    "many estimates would resolve it; importance = true adds the importance-sampled is_max."
)


def _max_flags(curve: pd.DataFrame, emp: pd.DataFrame) -> pd.Series:
    """``resolved`` of the empirical rel_rmse at its own argmax θ and at the closed-form argmax θ
    (without a closed form: at every θ)."""
    if "resolved" not in emp:
        return pd.Series([True])
    exact = curve[curve["metric"] == "theory_rel_rmse"].dropna(subset=["value"])
    if exact.empty:
        return emp["resolved"]
    thetas = (exact.loc[exact["value"].idxmax(), "theta"], emp.loc[emp["value"].idxmax(), "theta"])
    return emp.loc[emp["theta"].isin(thetas), "resolved"]


def _all_resolved(flags: pd.Series) -> bool | None:
    """False if any angle is unresolved, None if none is assessed, else True."""
    known = flags.dropna()
    if (~known.astype(bool)).any():
        return False
    return None if known.empty else True


def _max_of(df: pd.DataFrame, metric: str) -> float:
    values = df.loc[df["metric"] == metric, "value"]
    return float(values.max()) if len(values) else np.nan
