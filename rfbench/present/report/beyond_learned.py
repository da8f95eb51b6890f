"""What approximates a real model's attention at a fixed feature budget, and what the fit costs (the
``beyond-attention-learned`` result, configs/beyond/attention-learned.toml).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rfbench.present.attention_stats import (
    at_largest_budget,
    beats_text,
    beats_uniform_corrected,
    best_map,
    fitting_texts,
    median_ci_text,
)
from rfbench.present.report.markdown import load_named, table

NAME = "beyond-attention-learned"


def _fit_cost(df: pd.DataFrame, estimator: str) -> str:
    """Median CPU seconds of one head's fit and the total over the heads ("—": nothing fitted)."""
    cost = df[(df["metric"] == "fit_seconds") & (df["estimator"] == estimator)]["value"]
    if cost.empty:
        return "—"
    return f"{np.median(cost):.2g} s (all {len(cost)}: {cost.sum():.0f} s)"


def learned_part(df: pd.DataFrame) -> list[str]:
    """The table and its headline; empty when the file has no head rows."""
    heads, uniform = at_largest_budget(df)
    if heads.empty:
        return []
    heads = heads.assign(corrected=beats_uniform_corrected(heads))
    budget = int(heads["budget"].max())
    rows = []
    for est, part in heads.groupby("estimator", sort=False):
        oracle = "top_k" in part and part["top_k"].notna().any()
        rows.append([
            f"`{est}`" + (" (oracle)" if oracle else ""),
            median_ci_text(part["value"]),
            beats_text(part),
            _fit_cost(df, est),
        ])  # fmt: skip
    fit_text, text = fitting_texts(df) or ("—", "—")
    best = best_map(heads)
    tokens = int(heads["tokens"].max()) if "tokens" in heads else 0
    lines = [
        "### What approximates real attention: learned, local and data-aware methods",
        "",
        f"All-MiniLM-L6-v2, every head, {tokens} tokens, F = {budget} features (or keys) per query "
        f"row. Fitted methods (the learned maps, the `@fitted` coupling) are fitted on the "
        f"{fit_text} text's queries and keys and every method is measured on the held-out "
        f"{text} text's. Uniform attention has median output error "
        f"{median_ci_text(uniform['value'])}.",
        "",
    ]
    if best is not None:
        best_rows = heads[heads["estimator"] == best]["value"].to_numpy(float)
        lines += [
            f"Best feature map at this budget: `{best}`, median output error "
            f"{median_ci_text(best_rows)} against uniform attention's "
            f"{median_ci_text(uniform['value'])}.",
            "",
        ]
    lines += table(
        ["method", "median output error [95 % CI]", "beats uniform, Holm (raw)",
         "fit per head (CPU)"], rows,
    )  # fmt: skip
    return lines


def learned_section(results_dir: Path) -> list[str]:
    """:func:`learned_part` of the results folder's file (nothing when it is not there)."""
    df = load_named(results_dir, NAME)
    return learned_part(df) if df is not None else []


def learned_headline(results_dir: Path) -> str:
    """A clause for the Findings: the best feature map of the learned run against uniform
    attention, with its fit cost ("" when the run is not in the results)."""
    df = load_named(results_dir, NAME)
    if df is None:
        return ""
    heads, uniform = at_largest_budget(df)
    best = best_map(heads)
    if best is None or uniform.empty:
        return ""
    best_rows = heads[heads["estimator"] == best]["value"].to_numpy(float)
    cost = df[(df["metric"] == "fit_seconds") & (df["estimator"] == best)]["value"]
    fit = f", fitted in {cost.sum():.0f} CPU-s for all {len(cost)} heads" if len(cost) else ""
    return (
        f". What does approximate it, at F = {int(heads['budget'].max())} on held-out text: "
        f"`{best}` {median_ci_text(best_rows)}{fit}, against uniform attention's "
        f"{median_ci_text(uniform['value'])}"
    )
