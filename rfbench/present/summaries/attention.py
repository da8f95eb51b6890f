"""The terminal summary of ``rfbench attention``: a few headline rows printed after a run."""

from __future__ import annotations

import pandas as pd

from rfbench.present.attention_stats import beats_uniform_corrected, swap_gaps


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per method at the largest feature budget: median output error over heads and layers, the
    share of heads where it beats uniform attention (Holm-corrected over heads); then the
    baselines and the swap-in cosine with the share of the gap to exact attention recovered."""
    heads = results[(results["kind"] == "heads") & (results["metric"] == "out_rel_frob")]
    parts = []
    if len(heads):
        top = heads[heads["budget"] == heads["budget"].max()]
        if "tokens" in top:
            top = top[top["tokens"] == top["tokens"].max()]
        top = top.assign(beats_uniform=beats_uniform_corrected(top))
        g = top.groupby("estimator", sort=False)
        parts.append(
            pd.DataFrame(
                {
                    "estimator": list(g.groups),
                    "metric": "out_rel_frob (median over heads)",
                    "budget": int(top["budget"].max()),
                    "value": g["value"].median().to_numpy(),
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
            frame = {"estimator": [name], "metric": ["out_rel_frob (median)"], "budget": [rank],
                     "value": [sub["value"].median()]}  # fmt: skip
            parts.append(pd.DataFrame(frame))
    swap = results[results["metric"] == "swap_cosine"]
    if "layer" in swap:
        swap = swap[swap["layer"].isna()]  # every layer swapped (per layer: the report)
    if len(swap):
        parts.append(swap_gaps(swap)[["estimator", "metric", "budget", "value", "stderr"]])
    out = pd.concat(parts, ignore_index=True) if parts else results.head(0)
    return out.head(40)
