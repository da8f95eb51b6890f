"""The presentation of ``rfbench similarity``: per encoder, each method's Spearman ρ with the
human ratings, best first, with its bootstrap interval and its paired difference to exact attention
(docs/experiments.md#similarity)."""

from __future__ import annotations

import pandas as pd

from rfbench.compute.schema import better
from rfbench.present.summaries import register_presentation


@register_presentation("similarity")
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (encoder, method): ρ [95 % CI], s.e. over draws, ρ − ρ_exact [paired CI].

    Parameters
    ----------
    results : DataFrame
        The rows of an ``rfbench similarity`` run.

    Returns
    -------
    DataFrame
        Sorted by encoder, then ρ descending; ``attrs`` carry a title and the caption naming the
        metric and its direction.
    """
    rho = results[results["metric"] == "human_spearman"]
    diff = results[results["metric"] == "human_spearman_minus_exact"]
    keys = ["dataset", "estimator"]
    out = rho[[*keys, "value", "ci_low", "ci_high", "stderr"]].merge(
        diff[[*keys, "value", "ci_low", "ci_high"]], on=keys, how="left", suffixes=("", "_exact")
    )
    out["dataset"] = out["dataset"].astype(str).str.split("@").str[0]
    out = out.sort_values(["dataset", "value"], ascending=[True, False], kind="stable")
    out = out.rename(columns={"dataset": "model", "estimator": "method", "value": "spearman",
                              "stderr": "se_draws", "value_exact": "minus_exact",
                              "ci_low_exact": "minus_exact_low",
                              "ci_high_exact": "minus_exact_high"})  # fmt: skip
    out = out.round(3).reset_index(drop=True)
    out.attrs["title"] = "Spearman ρ with the Lee (2005) human ratings"
    out.attrs["caption"] = (
        "spearman: Spearman's ρ between the embeddings' cosine similarities and the human ratings "
        f"({better('human_spearman')}) with the method in every layer; ci_low/ci_high: 95 % "
        "bootstrap over documents; minus_exact: ρ − ρ_exact with its paired interval; se_draws: "
        "over a random method's draws"
    )
    return out
