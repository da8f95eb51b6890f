"""The report's "Does it matter downstream?" section, read from the rows: the causal language
model's subsection (``configs/beyond/lm.toml``, docs/experiments.md#language-model: perplexity after
the swap in every layer and in one layer at a time, and passkey recall, exact and uniform as the
two ends), then the encoders' (agreement with human document similarity after the swap,
``rfbench similarity``, configs/beyond/similarity.toml; docs/experiments.md#similarity).

:func:`lm_section` and :func:`similarity_subsection` are the subsections (a ``###`` heading); the
report's renderer puts them under the section's ``##`` heading (``HEADING``).
"""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from rfbench.present.report.markdown import load_named, pm, table

#: the result files of configs/beyond/similarity.toml and configs/beyond/lm.toml
RESULT, LM = "beyond-similarity", "beyond-lm"
#: the section's heading (shared with the language model's subsection)
HEADING = "## Does it matter downstream?"
ENDS = ("exact", "uniform")
_pm = partial(pm, se_digits=2, missing="not finite")


def _ci(row: pd.Series, percent: bool = False) -> str:
    """``value [low, high]`` of a row with a bootstrap interval (``percent``: signed, in %)."""
    vals = [
        float(row[k]) if row[k] is not None else math.nan for k in ("value", "ci_low", "ci_high")
    ]
    if percent:
        vals = [v * 100 for v in vals]
        if not math.isfinite(vals[0]):
            return "—"
        return f"{vals[0]:+.0f} % [{vals[1]:+.0f}, {vals[2]:+.0f}]"
    v, low, high = (f"{v:.3f}" if math.isfinite(v) else "—" for v in vals)
    return f"{v} [{low}, {high}]"


def _rows(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    return df[df["metric"] == metric].set_index("estimator")


def _at(rows: pd.DataFrame, name: str) -> pd.Series | None:
    return rows.loc[name] if name in rows.index else None


def _verdict(row: pd.Series | None) -> str:
    """Where a paired interval of a difference lies: above 0, below 0 or across it."""
    if row is None or not math.isfinite(float(row["ci_low"])):
        return "?"
    if float(row["ci_low"]) > 0:
        return "above"
    return "below" if float(row["ci_high"]) < 0 else "across"


def _model_part(df: pd.DataFrame, brief: bool = False) -> list[str]:
    """One encoder's paragraph and table (``brief``: the paragraph alone, its lists run in)."""
    spear = _rows(df, "human_spearman")
    if not all(e in spear.index for e in ENDS):
        return []
    minus_exact = _rows(df, "human_spearman_minus_exact")
    minus_uniform = _rows(df, "human_spearman_minus_uniform")
    gap_rows = _rows(df, "human_gap_recovered")
    model = str(df["dataset"].iloc[0]).split("@")[0]
    gap = _at(minus_exact, "uniform")
    resolved = _verdict(gap) == "below"
    methods = [e for e in dict.fromkeys(spear.index) if e not in ENDS]
    methods.sort(key=lambda e: -float(spear.loc[e, "value"]))
    body = []
    for name in methods:
        r = spear.loc[name]
        se = r["stderr"]
        se_text = f"± {float(se):.3f}" if se is not None and math.isfinite(float(se)) else "—"
        d_exact = _at(minus_exact, name)
        share = (
            _ci(gap_rows.loc[name], percent=True) if resolved and name in gap_rows.index else "—"
        )
        draws = int(r["draws"]) if "draws" in r and pd.notna(r["draws"]) else 1
        d_text = _ci(d_exact) if d_exact is not None else "—"
        body.append([f"`{name}`", draws, _ci(r), se_text, d_text, share])
    e, u = spear.loc["exact"], spear.loc["uniform"]
    if gap is not None:
        lead = pd.Series({"value": -gap["value"], "ci_low": -gap["ci_high"],
                          "ci_high": -gap["ci_low"]})  # fmt: skip
        gap_text = f"exact attention's lead over uniform {_ci(lead)}"
    else:
        gap_text = "no paired gap"
    lines = [
        f"**{model}**: exact attention {_ci(e)}, uniform attention in every layer {_ci(u)}; "
        f"{gap_text} (paired)"
        + (
            "."
            if resolved
            else ": within its interval, so this encoder barely needs its attention for the "
            "task and no share of the gap is given."
        ),
        "",
    ]
    lists = [  # (methods whose paired interval of a difference lies where)
        (
            "Not distinguishable from exact (paired interval of ρ − ρ_exact across 0)",
            minus_exact,
            {"across"},
        ),
        ("Above exact (paired interval above 0)", minus_exact, {"above"}),
        (
            "Not above uniform attention (paired interval of ρ − ρ_uniform not above 0)",
            minus_uniform,
            {"below", "across", "?"},
        ),
    ]
    listed = []
    for text, rows, where in lists:
        names = [n for n in methods if _verdict(_at(rows, n)) in where]
        listed += [f"{text}: {', '.join(f'`{n}`' for n in names)}."] if names else []
    lines += listed
    if brief:
        return [" ".join(line for line in lines if line), ""]
    lines += [""] if listed else []
    header = ["method", "draws", "Spearman ρ [95 % CI]", "s.e. over draws",
              "ρ − ρ_exact [paired CI]", "share of the gap recovered [CI]"]  # fmt: skip
    return lines + table(header, body)


def similarity_subsection(df: pd.DataFrame | None, brief: bool = False) -> list[str]:
    """The encoders' subsection from the rows of ``rfbench similarity`` ([] when empty).

    Parameters
    ----------
    df : DataFrame or None
        The result of configs/beyond/similarity.toml (or any ``rfbench similarity`` run).
    brief : bool
        REPORT.md's form: one paragraph per encoder and a link to the tables, which are in
        REPORT-tables.md (the full form).
    """
    if df is None or df.empty:
        return []
    docs, pairs = int(df["documents"].max()), int(df["pairs"].max())
    budgets = sorted(int(b) for b in df["budget"].dropna().unique())
    lines = [
        "### Encoders: agreement with human document similarity (`rfbench similarity`)",
        "",
        f"The {docs} news documents of Lee, Pincombe and Welsh (2005) and the mean human "
        f"similarity rating of each of their {pairs} pairs (from the gensim 4.4.0 wheel's test "
        "data). Each encoder embeds every document (mean pooling) with each method in every "
        f"layer at F = {', '.join(map(str, budgets))} (one draw per layer and head, fitted maps "
        "fitted on the GPL v3 text, never on the documents); the score is Spearman's ρ between "
        "the embeddings' cosine similarities and the human ratings. Intervals: 95 % percentile "
        "bootstrap over documents (pairs among resampled documents; the same resamples for every "
        "method, so differences are paired); s.e.: over the draws of a random method. Share of "
        "the gap: (ρ − ρ_uniform)/(ρ_exact − ρ_uniform), 0 = uniform, 100 % = exact.",
        "",
    ]
    for _, part in df.groupby("dataset", sort=False):
        lines += _model_part(part, brief)
    if brief:
        lines += ["Tables: [REPORT-tables.md](REPORT-tables.md#does-it-matter-downstream).", ""]
    return lines


def similarity_section(results_dir: Path, brief: bool = False) -> list[str]:
    """:func:`similarity_subsection` of the result in ``results_dir`` ([] when absent)."""
    return similarity_subsection(load_named(results_dir, RESULT), brief)


def _lm_rows(df: pd.DataFrame, kind: str, metric: str, every: bool = True) -> pd.DataFrame:
    sel = (df["kind"] == kind) & (df["metric"] == metric)
    if kind == "perplexity":
        sel &= df["layer"].isna() if every else df["layer"].notna()
    return df[sel]


def _value(rows: pd.DataFrame, name: str) -> tuple[float, float | None]:
    part = rows[rows["estimator"] == name]
    if part.empty:
        return float("nan"), None
    se = part["stderr"].iloc[0]
    return float(part["value"].iloc[0]), None if pd.isna(se) else float(se)


def _every_layer(df: pd.DataFrame) -> list[str]:
    ratio = _lm_rows(df, "perplexity", "ppl_ratio")
    gap = _lm_rows(df, "perplexity", "gap_recovered")
    ppl = _lm_rows(df, "perplexity", "perplexity")
    exact, _ = _value(ppl, "exact")
    uniform, _ = _value(ppl, "uniform")
    tokens, seqs = int(ppl["tokens"].iloc[0]), int(ppl["sequences"].iloc[0])
    budgets = sorted(ratio["budget"].dropna().astype(int).unique())
    top = budgets[-1] if budgets else None
    skipped = _lm_rows(df, "perplexity", "skipped")
    methods = [e for e in dict.fromkeys([*ratio["estimator"], *skipped["estimator"]])
               if e not in ENDS]  # fmt: skip
    header = ["method", *(f"ppl / exact, F = {f}" for f in budgets), f"gap recovered, F = {top}"]
    body = []
    for name in methods:
        ratios = [_pm(*_value(ratio[ratio["budget"] == f], name)) for f in budgets]
        body.append([f"`{name}`", *ratios, _pm(*_value(gap[gap["budget"] == top], name), 2)])
    lines = [
        f"Exact attention's perplexity on {seqs * tokens} tokens of the held-out text "
        f"({ppl['text'].iloc[0]}): **{exact:.3g}**; uniform attention (the running mean of the "
        f"values) in every layer: {uniform:.4g} ({uniform / exact:.3g}× exact). Each method in "
        "every layer, perplexity as a multiple of exact (± standard error over draws for random "
        "methods), and the share of the gap from uniform to exact it recovers "
        "((L_uniform − L)/(L_uniform − L_exact) on the mean loss L; 1 = exact, 0 = uniform, "
        "below 0 = worse than uniform):",
        "",
        *table(header, body),
    ]
    at = ratio[ratio["budget"] == top]
    finite = at[np.isfinite(at["value"].astype(float)) & ~at["estimator"].isin(["top-k"])]
    if not finite.empty:
        gap = np.abs(np.log(finite["value"].astype(float)))  # closest to 1 on a log scale
        best = finite.loc[gap.idxmin()]
        maps = finite[~finite["estimator"].str.startswith("window")]
        reading = (
            f"At F = {top} the closest to exact short of the top-k oracle is `{best['estimator']}` "
            f"({float(best['value']):.3g}× exact)"
        )
        if not maps.empty:
            good = maps.loc[np.abs(np.log(maps["value"].astype(float))).idxmin()]
            reading += (
                f"; the best feature map alone is `{good['estimator']}` "
                f"({float(good['value']):.3g}×)"
            )
        broken = at[~np.isfinite(at["value"].astype(float))]["estimator"].tolist()
        if broken:
            reading += "; non-finite outputs: " + ", ".join(f"`{e}`" for e in broken)
        lines += [reading + ".", ""]
    if not skipped.empty:
        where = "; ".join(
            f"`{name}` at F = {', '.join(str(int(f)) for f in part['budget'])}"
            for name, part in skipped.groupby("estimator", sort=False)
        )
        lines += [f"No finite pass (the outputs turned NaN in every draw; the normaliser of a "
                  f"map with non-negative features can vanish): {where}.", ""]  # fmt: skip
    return lines


def _one_layer(df: pd.DataFrame) -> list[str]:
    ratio = _lm_rows(df, "perplexity", "ppl_ratio", every=False)
    if ratio.empty:
        return []
    gap = _lm_rows(df, "perplexity", "gap_recovered", every=False)
    layers = sorted(ratio["layer"].astype(int).unique())
    budget = ratio["budget"].dropna()
    at = f" (F = {int(budget.iloc[0])})" if not budget.empty else ""
    body = []
    for name, part in ratio.groupby("estimator", sort=False):
        vals = part.set_index(part["layer"].astype(int))["value"].astype(float)
        worst = int(vals.idxmax())
        share = gap[(gap["estimator"] == name)]["value"].astype(float)
        body.append([f"`{name}`", f"{vals.median():.3g}", f"{vals.max():.3g} (layer {worst})",
                     f"{share.median():.2g}" if name != "uniform" else "0"])  # fmt: skip
    return [
        f"One layer swapped at a time{at}, the others exact ({len(layers)} layers: "
        f"{', '.join(map(str, layers))}): perplexity / exact over the layers, and the median "
        "share of that layer's uniform-to-exact gap recovered:",
        "",
        *table(["method", "median ppl / exact", "worst layer", "median gap recovered"], body),
    ]


def _heads(df: pd.DataFrame) -> list[str]:
    rows = df[(df["kind"] == "heads") & (df["metric"] == "out_rel_frob")]
    if rows.empty:
        return []
    top = int(rows["budget"].max())
    at = rows[rows["budget"] == top]
    layers = sorted(at["layer"].astype(int).unique())
    body = []
    for name, part in at.groupby("estimator", sort=False):
        beats = part["beats_uniform"].astype(bool) if "beats_uniform" in part else None
        share = f"{beats.mean():.0%}" if beats is not None else "—"
        body.append([f"`{name}`", f"{part['value'].astype(float).median():.3g}", share])
    n = at.groupby("estimator").size().max()
    return [
        f"The same methods head by head (the attention study's rows, causal; layers "
        f"{', '.join(map(str, layers))}, {n} query heads, F = {top}): the median output error "
        "‖Ô − O‖_F/‖O‖_F and the share of heads where it beats uniform attention (one-sided z > "
        "2 over the draws, uncorrected):",
        "",
        *table(["method", "median output error", "beats uniform"], body),
    ]


def _passkey(df: pd.DataFrame) -> list[str]:
    whole = _lm_rows(df, "passkey", "passkey_recall")
    tokens = _lm_rows(df, "passkey", "passkey_token_accuracy")
    if whole.empty:
        return []
    lengths = sorted(whole["tokens"].astype(int).unique())
    budget = whole["budget"].dropna()
    at = f"F = {int(budget.iloc[0])}" if not budget.empty else ""
    body = []
    for name in dict.fromkeys(whole["estimator"]):
        cells: list[object] = [f"`{name}`"]
        for length in lengths:
            w, _ = _value(whole[whole["tokens"] == length], name)
            t, se = _value(tokens[tokens["tokens"] == length], name)
            cells.append(f"{w:.0%} ({_pm(t, se, 2)})")
        body.append(cells)
    trials = int(whole["n_trials"].max())
    return [
        f"Passkey recall ({trials} seeded prompts per length, methods at {at}, in every layer): "
        "the share of prompts whose every answer token is the model's most likely next token "
        "(teacher-forced), and in brackets the share of answer tokens:",
        "",
        *table(["method", *(f"{n} tokens" for n in lengths)], body),
    ]


def lm_section(results_dir: Path) -> list[str]:
    """The LM subsection's Markdown lines ([] when configs/beyond/lm.toml has not run)."""
    df = load_named(results_dir, LM)
    if df is None or df.empty or not _lm_rows(df, "perplexity", "perplexity").shape[0]:
        return []
    model = str(df["dataset"].dropna().iloc[0])
    return [
        f"### A causal language model: {model} (`configs/beyond/lm.toml`)",
        "",
        "Every method of the attention study swapped into a causal LM's softmax attention "
        "(grouped-query heads: one key-side map per key/value head serves its query heads; "
        "window methods keep 4 attention sinks among their keys). Figure: `beyond-lm`.",
        "",
        *_every_layer(df),
        *_one_layer(df),
        *_passkey(df),
        *_heads(df),
    ]


def lm_summary(results_dir: Path) -> list[str]:
    """One paragraph of the LM's headline numbers for REPORT.md (its tables: :func:`lm_section`,
    in REPORT-tables.md); [] when configs/beyond/lm.toml has not run."""
    df = load_named(results_dir, LM)
    if df is None or df.empty:
        return []
    ppl = _lm_rows(df, "perplexity", "perplexity")
    ratio = _lm_rows(df, "perplexity", "ppl_ratio")
    recall = _lm_rows(df, "passkey", "passkey_recall")
    if ppl.empty:
        return []
    exact, _ = _value(ppl, "exact")
    top = ratio["budget"].max()
    at = ratio[ratio["budget"] == top]

    def times(name: str) -> str:
        value, _ = _value(ratio if name == "uniform" else at, name)
        return f"`{name}` {value:.3g}×" if np.isfinite(value) else f"`{name}` not finite"

    maps = [e for e in dict.fromkeys(at["estimator"])
            if not e.startswith("window") and e != "top-k"]  # fmt: skip
    spread = at[at["estimator"].isin(maps)]["value"].astype(float)
    kept = sorted(recall[recall["value"] > 0]["estimator"].unique()) if not recall.empty else []
    text = (
        f"{df['dataset'].dropna().iloc[0]} (`configs/beyond/lm.toml`): exact "
        f"perplexity {exact:.3g} on the held-out text; with each method in every layer at "
        f"F = {int(top)}, perplexity / exact is {times('uniform')}, "
        f"{times('window')}, {times('top-k')}, the feature maps "
        f"{spread.min():.3g}–{spread.max():.3g}×"
    )
    if not recall.empty:
        text += "; passkey recall survives only with " + (
            ", ".join(f"`{e}`" for e in kept) if kept else "none"
        )
    return [
        "### A causal language model: perplexity and recall (`rfbench lm`)",
        "",
        text + ". Tables: [REPORT-tables.md](REPORT-tables.md#does-it-matter-downstream).",
        "",
    ]
