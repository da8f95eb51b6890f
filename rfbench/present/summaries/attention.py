"""The terminal summary of ``rfbench attention``: a few headline rows printed after a run."""

from __future__ import annotations

import pandas as pd


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per estimator at its largest m: mean output error over heads and layers, the share of
    heads where it beats uniform attention, normaliser failures; then the baselines and the
    swap-in score."""
    heads = results[(results["kind"] == "heads") & (results["metric"] == "out_rel_frob")]
    parts = []
    if len(heads):
        top = heads[heads["m"] == heads["m"].max()]
        if "tokens" in top:
            top = top[top["tokens"] == top["tokens"].max()]
        g = top.groupby("estimator", sort=False)
        parts.append(
            pd.DataFrame(
                {
                    "estimator": list(g.groups),
                    "metric": "out_rel_frob (mean over heads)",
                    "m": int(top["m"].max()),
                    "value": g["value"].mean().to_numpy(),
                    "beats_uniform": g["beats_uniform"].mean().to_numpy(),
                }
            )
        )
    base = results[(results["kind"] == "baselines") & (results["metric"] == "out_rel_frob")]
    if len(base):
        base = base[base["tokens"] == base["tokens"].max()]
        for name, sub in base.groupby("estimator", sort=False):
            rank = sub["rank"].min() if name == "best-rank" else None
            if rank is not None and pd.notna(rank):
                sub = sub[sub["rank"] == rank]
            frame = {"estimator": [name], "metric": ["out_rel_frob (mean)"], "m": [rank],
                     "value": [sub["value"].mean()]}  # fmt: skip
            parts.append(pd.DataFrame(frame))
    swap = results[results["metric"].isin(["swap_cosine", "swap_spearman"])]
    if len(swap):
        parts.append(swap[["estimator", "metric", "m", "value", "stderr"]])
    out = pd.concat(parts, ignore_index=True) if parts else results.head(0)
    return out.head(40)
