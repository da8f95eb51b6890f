"""The presentation of ``rfbench theory``: the rows printed after a run."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from rfbench.present.summaries import register_presentation


@register_presentation("theory")
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6 ratios (v → 0, v ≈ 1), Fig. 4 ρ, Fig. 5 mean w_ij, Fig. 1 endpoint MSE (r ≈ 1)."""
    wanted = ["v", "rep", "passes", "r", "theta"]
    res = results.reindex(columns=[*results.columns, *(c for c in wanted if c not in results)])
    rows: list[dict] = []

    def add(sub: pd.DataFrame, label: Callable[[dict], str]) -> None:
        for rec in sub.to_dict("records"):
            keys = ("figure", "estimator", "metric", "value", "stderr")
            rows.append({**{k: rec[k] for k in keys}, "at": label(rec)})

    fig6 = res[(res["figure"] == "simrf-fig6") & (res["estimator"] != "positive@iid")]
    if len(fig6):
        v1 = fig6["v"].iloc[(fig6["v"] - 1.0).abs().argmin()]
        add(fig6[fig6["v"].isin([0.0, v1])], lambda r: f"v = {r['v']:.4g}")
    fig4 = res[(res["figure"] == "simrf-fig4") & (res["metric"] == "rf_conformity")]
    fig4 = fig4[fig4["rep"] == 0]
    if len(fig4):
        last = fig4["passes"].isna() | (fig4["passes"] == fig4["passes"].max())
        add(fig4[last], lambda r: "" if pd.isna(r["passes"]) else f"{r['passes']} passes")
    fig5 = res[(res["figure"] == "simrf-fig5") & (res["metric"] == "density")]
    for name, curve in fig5.groupby("estimator", sort=False):
        mean_w = np.trapezoid(curve["w"] * curve["value"], curve["w"])
        rows.append({"figure": "simrf-fig5", "estimator": name, "metric": "mean of w_ij",
                     "at": "∫ w p(w) dw", "value": mean_w, "stderr": None})  # fmt: skip
    fig1 = res[(res["figure"] == "hrf-fig1") & (res["metric"] == "theory_mse")]
    if len(fig1):
        r1 = fig1["r"].iloc[(fig1["r"] - 1.0).abs().argmin()]
        ends = fig1[(fig1["r"] == r1) & fig1["theta"].isin([0.0, np.pi])]
        worst = ends.loc[ends.groupby("estimator", sort=False)["value"].idxmax()]
        add(worst, lambda r: f"max over θ ∈ {{0, π}}, r = {r['r']:.3g}")
    cols = ["figure", "estimator", "metric", "at", "value", "stderr"]
    return pd.DataFrame(rows, columns=cols).head(15)
