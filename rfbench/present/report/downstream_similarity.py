"""The encoders' part of the report's "Does it matter downstream?" section: agreement with human
document similarity after the swap (``rfbench similarity``, configs/beyond/similarity.toml;
docs/experiments.md#similarity), read from the rows.

:func:`similarity_subsection` is the subsection (a ``###`` heading); the report's renderer puts it
under the section's ``##`` heading (``HEADING``), after the causal language model's subsection.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from rfbench.present.report.markdown import load_named, table

#: the result file of configs/beyond/similarity.toml
RESULT = "beyond-similarity"
#: the section's heading (shared with the language model's subsection)
HEADING = "## Does it matter downstream?"
ENDS = ("exact", "uniform")


def _num(value: object, digits: int = 3) -> str:
    v = float(value) if value is not None else math.nan
    return f"{v:.{digits}f}" if math.isfinite(v) else "—"


def _ci(row: pd.Series, digits: int = 3, percent: bool = False) -> str:
    """``value [low, high]`` of a row with a bootstrap interval."""
    if percent:
        vals = [float(row[k]) * 100 for k in ("value", "ci_low", "ci_high")]
        if not math.isfinite(vals[0]):
            return "—"
        return f"{vals[0]:+.0f} % [{vals[1]:+.0f}, {vals[2]:+.0f}]"
    low, high = _num(row["ci_low"], digits), _num(row["ci_high"], digits)
    return f"{_num(row['value'], digits)} [{low}, {high}]"


def _rows(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    return df[df["metric"] == metric].set_index("estimator")


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
    gap = minus_exact.loc["uniform"] if "uniform" in minus_exact.index else None
    resolved = _verdict(gap) == "below"
    methods = [e for e in dict.fromkeys(spear.index) if e not in ENDS]
    methods.sort(key=lambda e: -float(spear.loc[e, "value"]))
    body = []
    near, above, below_uniform = [], [], []
    for name in methods:
        r = spear.loc[name]
        se = r["stderr"]
        se_text = f"± {float(se):.3f}" if se is not None and math.isfinite(float(se)) else "—"
        d_exact = minus_exact.loc[name] if name in minus_exact.index else None
        d_uniform = minus_uniform.loc[name] if name in minus_uniform.index else None
        share = (
            _ci(gap_rows.loc[name], percent=True) if resolved and name in gap_rows.index else "—"
        )
        draws = int(r["draws"]) if "draws" in r and pd.notna(r["draws"]) else 1
        d_text = _ci(d_exact) if d_exact is not None else "—"
        body.append([f"`{name}`", draws, _ci(r), se_text, d_text, share])
        where = _verdict(d_exact)
        if where == "across":
            near.append(name)
        elif where == "above":
            above.append(name)
        if _verdict(d_uniform) != "above":
            below_uniform.append(name)
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
    if near:
        lines.append(f"Not distinguishable from exact (paired interval of ρ − ρ_exact across 0): "
                     f"{', '.join(f'`{n}`' for n in near)}.")  # fmt: skip
    if above:
        lines.append(
            f"Above exact (paired interval above 0): {', '.join(f'`{n}`' for n in above)}."
        )
    if below_uniform:
        lines.append(f"Not above uniform attention (paired interval of ρ − ρ_uniform not above 0): "
                     f"{', '.join(f'`{n}`' for n in below_uniform)}.")  # fmt: skip
    if brief:
        return [" ".join(line for line in lines if line), ""]
    lines += [""] if near or above or below_uniform else []
    header = ["method", "draws", "Spearman ρ [95 % CI]", "s.e. over draws",
              "ρ − ρ_exact [paired CI]", "share of the gap recovered [CI]"]  # fmt: skip
    return lines + table(header, body)


def similarity_subsection(df: pd.DataFrame, brief: bool = False) -> list[str]:
    """The encoders' subsection from the rows of ``rfbench similarity`` ([] when empty).

    Parameters
    ----------
    df : DataFrame
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
    df = load_named(results_dir, RESULT)
    return similarity_subsection(df, brief) if df is not None else []
