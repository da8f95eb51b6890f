"""The presentation of ``rfbench gram``: the rows printed after a run."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfbench.present.summaries import register_presentation


@register_presentation("gram")
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Fig. 7 at m = d (MC and theory per estimator); the grid's best/worst cells at r ≈ 1."""
    parts = []
    own = results[results["inputs"] == "self"] if "inputs" in results else results
    errors = own["metric"].isin(["frob_sq_per_entry", "theory_frob_sq_per_entry"])
    at_d = own[(own["m"] == own["d"]) & errors]
    parts.append(_ranked(at_d))
    grid = results[results["inputs"] == "attention"] if "inputs" in results else own[:0]
    if len(grid):
        r_ref = grid["r"].iloc[(grid["r"] - 1.0).abs().argmin()]
        for metric, kernel, _ in GRID_PANELS:
            sub = grid[(grid["kernel"] == kernel) & (grid["metric"] == metric)]
            sub = sub[(sub["r"] == r_ref) & np.isfinite(sub["value"])]
            parts += [sub.nsmallest(2, "value").assign(rank="best")]
            parts += [sub.nlargest(2, "value").assign(rank="worst")]
    files = results[results["inputs"].isin(["file", "dataset"])] if "inputs" in results else own[:0]
    if len(files):  # the user's points: every estimator at its largest m, best first
        by = [c for c in ("dataset", "estimator") if c in files]
        top = files[files["m"] == files.groupby(by, dropna=False)["m"].transform("max")]
        wanted = top[top["metric"].isin(["theory_frob_sq_per_entry", "frob_sq_per_entry"])]
        keys = [c for c in ("dataset", "kernel", "metric", "value") if c in wanted]
        parts.append(_ranked(wanted.sort_values(keys, ascending=[c != "metric" for c in keys])))
    cols = ["figure", "dataset", "estimator", "kernel", "metric", "m", "sigma", "r", "rank",
            "value"]  # fmt: skip
    out = pd.concat(parts, ignore_index=True) if parts else results[:0]
    if "rank" in out and (out["rank"] == "").all():
        out = out.drop(columns="rank")
    if "sigma" in out and (out["sigma"] == 0).any():  # 0: the lengthscale rule, not σ = 0
        out = out.assign(sigma=out["sigma"].map(lambda s: RULE if s == 0 else s).astype(object))
    return out[[c for c in [*cols, "stderr", "resolved"] if c in out.columns]].head(15)


#: The Spectraformer grid's panels (metric, kernel, title) in order; the attention is the softmax
#: one (docs/experiments.md#spectraformer-grid).
GRID_PANELS = (
    ("rel_frob", "softmax", "‖K̂ − K‖_F / ‖K‖_F, softmax"),
    ("rel_frob", "gaussian", "‖K̂ − K‖_F / ‖K‖_F, Gaussian"),
    ("attn_rel_frob", "softmax", "‖Â − A‖_F / ‖A‖_F, softmax attention"),
)
#: what σ = 0 means for a data set's points (gram's ``sigma`` parameter): the lengthscale rule
RULE = "1/(2·mean distance)"


def _ranked(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``rank`` = 1 for the smallest error among the estimators of its (kernel,
    metric, m) cell, by point value (the stderr column says whether a rank is resolved)."""
    if not len(rows):
        return rows.assign(rank="")
    keys = [c for c in ("dataset", "kernel", "metric", "m") if c in rows]
    rank = rows.groupby(keys, dropna=False)["value"].rank(method="min")
    return rows.assign(rank=rank.map(lambda r: "" if pd.isna(r) else str(int(r))))
