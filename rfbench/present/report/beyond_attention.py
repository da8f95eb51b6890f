"""The "Beyond the papers" parts on real data: attention heads of a pretrained transformer
(docs/experiments.md#beyond-attention), what approximates it with learned, local and data-aware
methods, and random features against Nyström (docs/experiments.md#beyond-nystrom), every number
read from the results with its uncertainty.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from rfbench.present.attention_stats import (
    at_largest_budget,
    beats_text,
    beats_uniform_corrected,
    best_map,
    fitting_texts,
    is_deterministic,
    median_ci_text,
    swap_gaps,
)
from rfbench.present.report.beyond_models import models_section
from rfbench.present.report.markdown import load_named, pm, table

ATTENTION, NYSTROM = "beyond-attention", "beyond-nystrom"
#: what approximates a real model's attention at a fixed feature budget, and what the fit costs
#: (configs/beyond/attention-learned.toml)
LEARNED = "beyond-attention-learned"


def _swap_cell(gaps: pd.DataFrame, est: str) -> str:
    """Swap-in cosine ± SE and the share of the gap to exact recovered ± SE."""
    cos = gaps[(gaps["estimator"] == est) & (gaps["metric"] == "swap_cosine")]
    gap = gaps[(gaps["estimator"] == est) & (gaps["metric"] == "swap_cosine gap recovered")]
    if cos.empty:
        return "—"
    text = pm(float(cos["value"].iloc[0]), _se(cos))
    if len(gap):
        text += f" (gap {pm(float(gap['value'].iloc[0]), _se(gap), 2)})"
    return text


def _oracle(part: pd.DataFrame) -> bool:
    """Top-k rows (keys chosen from every logit) carry ``top_k``."""
    return "top_k" in part and part["top_k"].notna().any()


def _fitted(part: pd.DataFrame) -> str:
    notes = part["note"].dropna().astype(str) if "note" in part else pd.Series(dtype=str)
    return " *fitted*" if notes.str.contains("fitted to this head").any() else ""


def _fitting(df: pd.DataFrame) -> str:
    """Where the data-dependent methods (Nyström's landmarks, GERF's parameters, the fitted
    coupling) were fitted and where the head rows were measured, as the rows say."""
    texts = fitting_texts(df[df["kind"] == "heads"] if "kind" in df else df)
    if texts is None:
        return (
            "Maps marked *fitted* (Nyström's landmarks, GERF's parameters) are fitted to the "
            "very queries and keys they are scored on."
        )
    fit_text, text = texts
    return (
        f"Data-dependent methods (Nyström's landmarks, GERF's parameters) are fitted on the "
        f"{fit_text} text's queries and keys; every method in the per-head columns is measured "
        f"on the held-out {text} text's."
    )


def _swap_fitting(swap: pd.DataFrame) -> str:
    """Where the swap-in's data-dependent methods were fitted, as its rows say: on held-out text
    when they name a fitting text, otherwise on the very sentences they are scored on."""
    texts = fitting_texts(swap)
    tokens = swap["tokens"].dropna() if "tokens" in swap else pd.Series(dtype=float)
    at = f" at {int(tokens.max())} tokens" if len(tokens) else ""
    if texts is not None:
        return f"The swap-in{at} fits on the {texts[0]} text and scores the {texts[1]} text's. "
    return (
        f"The swap-in runs{at} and fits Nyström's landmarks and GERF's parameters on the very "
        "sentences it scores: its column is in-sample, not held out. "
    )


def _se(rows: pd.DataFrame) -> float | None:
    se = rows["stderr"].iloc[0]
    return float(se) if pd.notna(se) else None


def at_top(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series, int, int, str] | None:
    """The head rows at the longest sequence and largest feature budget, uniform attention's
    output errors at that length, the length, the budget and its column (``m`` in files from
    before feature budgets); None without head rows."""
    heads = df[df["kind"] == "heads"]
    if heads.empty:
        return None
    budget = "budget" if "budget" in heads and heads["budget"].notna().any() else "m"
    tokens, top = int(heads["tokens"].max()), int(heads[budget].max())
    base = df[(df["kind"] == "baselines") & (df["metric"] == "out_rel_frob")]
    base = base[base["tokens"] == tokens] if "tokens" in base else base
    at = heads[(heads["tokens"] == tokens) & (heads[budget] == top)]
    return at, base[base["estimator"] == "uniform"]["value"], tokens, top, budget


def attention_part(df: pd.DataFrame) -> list[str]:
    """Per method at the largest feature budget and sequence length: median output error over heads
    [95 % CI], width, share of heads beating uniform attention (Holm; raw), non-positive normalisers
    and the swap-in cosine (gap recovered).
    """
    found = at_top(df)
    if found is None:
        return []
    at, uniform, tokens, top, budget = found
    out = at[at["metric"] == "out_rel_frob"]
    swap = df[(df["kind"] == "swap") & df["metric"].isin(["swap_cosine", "swap_spearman"])]
    gaps = swap_gaps(swap) if len(swap) else swap
    rows, medians, points = [], {}, []  # medians: oracles aside; points: deterministic methods
    for est, part in out.groupby("estimator", sort=False):
        bad = at[(at["estimator"] == est) & (at["metric"] == "bad_normaliser")]["value"]
        width = part["features"].dropna().unique() if "features" in part else []
        if not _oracle(part):
            medians[est] = float(np.median(part["value"]))
        if is_deterministic(part).all():
            points.append(f"`{est}`")
        rows.append([
            f"`{est}`" + (" (oracle)" if _oracle(part) else "") + _fitted(part),
            ", ".join(str(int(w)) for w in width) or "—",
            median_ci_text(part["value"]),
            beats_text(part),
            pm(float(bad.mean())) if len(bad) else "—",
            *([_swap_cell(gaps, est)] if len(swap) else []),
        ])  # fmt: skip
    swap_uniform = gaps[(gaps["estimator"] == "uniform") & (gaps["metric"] == "swap_cosine")]
    uniform_cos = pm(float(swap_uniform["value"].iloc[0])) if len(swap_uniform) else "—"
    n_draws = int(out["n_trials"].max()) if len(out) else 0
    trials = swap["n_trials"].max() if len(swap) else float("nan")
    swap_f = swap["budget"].dropna() if "budget" in swap else pd.Series(dtype=float)
    best = min(medians, key=medians.get) if medians else None
    unit = "features (the width of φ(q))" if budget == "budget" else "projections"
    lines = [
        "### Real attention (`rfbench attention`, all-MiniLM-L6-v2)",
        "",
        f"Every head of every layer on {tokens} tokens of English text, {top} {unit} per method "
        f"(*width*: the real width each used), {n_draws} draws per head. Local methods at the same "
        "work per query row: a window of F keys, top-k with k = F (an oracle: it reads every "
        "logit), a window of F/2 keys plus F/2 features (docs/experiments.md#attention). "
        "Output error ‖Ô − O‖_F/‖O‖_F: median over heads with its 95 % distribution-free "
        f"interval. Uniform attention (the mean of V) has median {median_ci_text(uniform)}, a zero "
        "output 1. *Beats uniform*: the share of heads where the one-sided t-test over the draws "
        "(the row's z against t(n − 1) for a mean of n draws) rejects at the level of z > 2 "
        "(α ≈ 0.023), Holm-corrected over the heads (uncorrected in brackets)"
        + (
            f"; {', '.join(points)} do not vary over the draws (deterministic): their share is a "
            "point comparison with uniform attention on each head, no test. "
            if points
            else ". "
        )
        + (
            "Swap-in: cosine between the sentence embeddings with every layer's softmax replaced"
            + (f" ({int(swap_f.iloc[0])} features)" if len(swap_f) else "")
            + f" and the exact ones, ± one standard error over {trials:.0f} trials, and the "
            f"share of the gap from uniform attention ({uniform_cos}) to exact attention (1) it "
            "recovers. " + _swap_fitting(swap)
            if len(swap)
            else "No swap-in score in this run (the held-out downstream test is the similarity "
            "study, under *Does it matter downstream?*). "
        )
        + _fitting(df),
        "",
    ]
    if best is not None:
        lines += [
            f"Lowest median output error at this budget, oracles aside: `{best}` "
            f"({median_ci_text(out[out['estimator'] == best]['value'])}, uniform attention "
            f"{median_ci_text(uniform)}).",
            "",
        ]
    lines += table(
        ["method", "width", "median output error [95 % CI]", "beats uniform, Holm (raw)",
         "non-positive normalisers", *(["swap-in cosine (gap recovered)"] if len(swap) else [])],
        rows,
    )  # fmt: skip
    return lines + _per_layer(gaps)


def _per_layer(gaps: pd.DataFrame) -> list[str]:
    """The share of the swap-in gap recovered when one layer at a time is swapped."""
    if gaps.empty or "layer" not in gaps or gaps["layer"].isna().all():
        return []
    part = gaps[(gaps["metric"] == "swap_cosine gap recovered") & gaps["layer"].notna()]
    rows = []
    for est, sub in part.groupby("estimator", sort=False):
        sub = sub.sort_values("layer")
        cells = [
            pm(float(v), float(se) if pd.notna(se) else None, 2)
            for v, se in zip(sub["value"], sub["stderr"], strict=True)
        ]
        rows.append([f"`{est}`", *cells])
    layers = sorted(int(x) for x in part["layer"].unique())
    intro = (
        "Per layer: the share of the swap-in cosine's gap from uniform to exact attention "
        "recovered when only that layer's softmax is replaced (the others exact), ± one "
        "standard error over the trials (0 = uniform attention in that layer, 1 = exact)"
    )
    if len(rows) == 1:  # one method: a sentence, not a one-row table
        cells = ", ".join(f"layer {x} {c}" for x, c in zip(layers, rows[0][1:], strict=True))
        return [f"{intro}, for {rows[0][0]}: {cells}.", ""]
    return [intro + ".", "", *table(["method", *(f"layer {x}" for x in layers)], rows)]


def nystrom_part(df: pd.DataFrame) -> list[str]:
    """Gram RMSE per data set at m = d: random features, Nyström and the rank-m bound."""
    rows = []
    for dataset, part in df.groupby("dataset", sort=False):
        d = int(part["d"].iloc[0])
        at = part[part["m"] == d]
        emp = at[at["metric"] == "frob_sq_per_entry"].set_index("estimator")
        oracle = at[(at["metric"] == "oracle_frob_sq_per_entry") & (at["features"] == d)]
        cells = []
        for est in emp.index:
            mse, se = float(emp.loc[est, "value"]), emp.loc[est, "stderr"]
            se_rmse = float(se) / (2 * math.sqrt(mse)) if pd.notna(se) and mse > 0 else None
            flag = emp.loc[est, "resolved"] if "resolved" in emp else None
            unresolved = flag is not None and not pd.isna(flag) and not bool(flag)
            heavy = " (unresolved: heavy tail, closed form above)" if unresolved else ""
            cells.append(f"`{est}` {pm(math.sqrt(mse), se_rmse)}{heavy}")
        bound = math.sqrt(float(oracle["value"].min())) if len(oracle) else float("nan")
        rows.append([dataset, d, "; ".join(cells), pm(bound)])
    return [
        "### Random features vs Nyström (`configs/beyond/nystrom.toml`)",
        "",
        "Gaussian-kernel Gram RMSE (± one standard error) at m = d projections or landmarks, "
        "beside the best rank-d matrix (a bound, not an estimator).",
        "",
        *table(["data set", "d", "Gram RMSE at m = d", "rank-d bound"], rows),
    ]


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
        rows.append([
            f"`{est}`" + (" (oracle)" if _oracle(part) else ""),
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
    df = load_named(results_dir, LEARNED)
    return learned_part(df) if df is not None else []


def learned_headline(results_dir: Path) -> str:
    """A clause for the Findings: the best feature map of the learned run against uniform
    attention, with its fit cost ("" when the run is not in the results)."""
    df = load_named(results_dir, LEARNED)
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


def real_data_section(results_dir: Path) -> list[str]:
    """The attention part, the finding per model and mask, and the Nyström part (each left out
    when its result files are missing)."""
    attention, nystrom = (load_named(results_dir, name) for name in (ATTENTION, NYSTROM))
    return [
        *(attention_part(attention) if attention is not None else []),
        *learned_section(results_dir),
        *models_section(results_dir),
        *(nystrom_part(nystrom) if nystrom is not None else []),
    ]
