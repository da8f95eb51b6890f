"""The presentation of ``rfbench attention``: the rows printed after a run, its chart's view."""

from __future__ import annotations

import pandas as pd

from rfbench.compute.schema import better
from rfbench.present.attention_stats import beats_uniform_corrected, swap_gaps
from rfbench.present.summaries import View, register_presentation

#: the column of the methods' values, in words with its direction
VALUE = f"output error, median ({better('out_rel_frob')})"
#: the columns of the swap-in rows (and, but the standard error, of the others)
COLUMNS = ["estimator", "metric", "budget", "value", "stderr"]


VIEW = View(
    metric="out_rel_frob",
    x="budget",
    where={"kind": ("heads", "baselines")},
    drop_estimators=("best-rank", "exact"),
    baselines=("uniform", "zero"),
    aggregate=("head",),
    y_log=True,
    budget="budget",
    panels=("layer",),
    x_log=True,
)
"""The chart (docs/experiments.md#attention, Figures): the output error of the heads against the
feature budget, per layer, uniform and zero attention as lines; the swap-in scores and the
rank-r oracle left out."""


@register_presentation("attention", VIEW)
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per method at the largest feature budget F (and sequence length T): the median relative
    output error over heads and layers, and the share of heads where it beats uniform attention
    (Holm-corrected over heads), best first; then the baselines at the same T — the best rank-r
    approximation at r = F when the run has it, so every row compares like with like — and the
    swap-in cosine with the share of the gap to exact attention recovered. ``attrs`` say the
    model, mask and T (``title``) and the metric and its direction (``caption``)."""
    heads = results[(results["kind"] == "heads") & (results["metric"] == "out_rel_frob")]
    parts = []
    budget = tokens = None
    if len(heads):
        budget = int(heads["budget"].max())
        top = heads[heads["budget"] == budget]
        if "tokens" in top:
            tokens = top["tokens"].max()
            top = top[top["tokens"] == tokens]
        top = top.assign(beats_uniform=beats_uniform_corrected(top))
        methods = top.groupby("estimator", sort=False).agg(
            value=("value", "median"), heads_beating_uniform=("beats_uniform", "mean")
        )
        methods = methods.reset_index().assign(metric=VALUE, budget=budget)
        methods = methods[[*COLUMNS[:4], "heads_beating_uniform"]]
        parts.append(methods.sort_values("value", kind="stable"))
    base = results[(results["kind"] == "baselines") & (results["metric"] == "out_rel_frob")]
    if len(base):
        tokens = base["tokens"].max() if tokens is None else tokens
        base = base[base["tokens"] == tokens]
        for name, sub in base.groupby("estimator", sort=False):
            rank = _rank_like(sub["rank"], budget) if name == "best-rank" else None
            if rank is not None:
                sub = sub[sub["rank"] == rank]
            frame = {"estimator": [name], "metric": ["output error, median (baseline)"],
                     "budget": [rank], "value": [sub["value"].median()]}  # fmt: skip
            parts.append(pd.DataFrame(frame))
    swap = results[results["metric"] == "swap_cosine"]
    if "layer" in swap:
        swap = swap[swap["layer"].isna()]  # every layer swapped (per layer: the report)
    if len(swap):
        gaps = swap_gaps(swap)[COLUMNS]
        gaps = gaps.assign(metric=gaps["metric"] + f" ({better('swap_cosine')})")
        parts.append(gaps)
    parts += _perplexity(results)
    out = pd.concat(parts, ignore_index=True) if parts else results.head(0)
    out = out.head(48)
    out.attrs["title"] = _setting(results, tokens)
    if budget is not None:
        at = f"F = {budget}" + (f", T = {int(tokens)}" if pd.notna(tokens) else "")
        out.attrs["caption"] = (
            f"value: the relative output error ‖ΔO‖_F/‖O‖_F ({better('out_rel_frob')}), median "
            "over heads "
            f"and layers at {at}; heads_beating_uniform: the share of heads where the method's "
            "error is significantly below uniform attention's (Holm-corrected); best-rank: the "
            "best rank-r approximation with r = F"
            + (
                "; perplexity / exact: the language model's perplexity on held-out text with the "
                "method in every layer over exact attention's, ± its standard error over draws"
                if (results["metric"] == "ppl_ratio").any()
                else ""
            )
        )
    return out


def _perplexity(results: pd.DataFrame) -> list[pd.DataFrame]:
    """A causal LM's perplexity ratio to exact attention with each method in every layer, at the
    largest swap-in budget (exact and uniform attention beside them), best first."""
    ppl = results[results["metric"] == "ppl_ratio"]
    if "layer" in ppl:
        ppl = ppl[ppl["layer"].isna()]  # every layer swapped (one at a time: the report)
    if ppl.empty:
        return []
    budgets = ppl["budget"].dropna()
    if len(budgets):
        ppl = ppl[ppl["budget"].isna() | (ppl["budget"] == budgets.max())]
    label = f"perplexity / exact ({better('ppl_ratio')})"
    return [ppl[COLUMNS].assign(metric=label).sort_values("value", kind="stable")]


def _rank_like(ranks: pd.Series, budget: int | None) -> int | None:
    """The best-rank baseline's rank matching the methods' budget F (else the largest below)."""
    known = sorted(int(r) for r in ranks.dropna().unique())
    if not known:
        return None
    if budget is None:
        return known[0]
    below = [r for r in known if r <= budget]
    return below[-1] if below else known[0]


def _setting(results: pd.DataFrame, tokens: object) -> str:
    """The model or data (``dataset``), the mask and T, in words: ``all-MiniLM-L6-v2, causal,
    T = 512``."""
    words = []
    if "dataset" in results and results["dataset"].notna().any():
        label = str(results["dataset"].dropna().iloc[0]).split("@")[0]
        words.append(label.rsplit("/", 1)[-1])
    causal = "causal" in results and results["causal"].fillna(False).astype(bool).any()
    words.append("causal" if causal else "bidirectional")
    if tokens is not None and pd.notna(tokens):
        words.append(f"T = {int(tokens)}")
    return ", ".join(words)
