"""``rfbench compare`` for people: the per-file summary, the row tables, the markdown document and
the one-line account of configs that differ (docs/architecture.md#compare)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.text import markdown_table
from rfbench.present.compare.compare import (
    COMPUTED,
    MEASURED,
    ROW_SUFFIX,
    Comparison,
    FileComparison,
    as_text,
)
from rfbench.present.compare.inputs import describe_diff, shown_value


def config_warning(result: Comparison) -> str | None:
    """One line saying which files' runs had different configs and what that changes; None if
    every file pair had one config."""
    differ = result.differing()
    if not differ:
        return None
    first = differ[0]
    return (
        f"A and B ran different configs in {len(differ)} of {len(result.files)} file(s) "
        f"(e.g. {first.name}: {describe_diff(first.config_diff, limit=3)}): only the rows both "
        "have are compared, the others are not counted missing, and no time B/A is formed"
    )


def _config_cell(f: FileComparison) -> str:
    if not f.config_diff:
        return "same"
    keys = sorted(f.config_diff, key=lambda k: (k != "profile", str(k)))
    return "differs: " + ", ".join(keys[:3]) + (" …" if len(keys) > 3 else "")


def summary_table(result: Comparison) -> pd.DataFrame:
    """One row per file: its config (same or which keys differ), rows shared / flagged / new /
    missing / outside the other config, jobs' CPU seconds, ratio B/A."""
    rows = []
    for f in result.files:
        t = f.timing
        rows.append({
            "file": f.name,
            "config": _config_cell(f),
            "shared": len(f.shared),
            "flagged": len(f.flagged),
            "new": len(f.new),
            "missing": len(f.missing),
            "outside": f.outside,
            "seconds A": t.get("cpu_a") if t.get("cpu_a") is not None else t.get("wall_a"),
            "seconds B": t.get("cpu_b") if t.get("cpu_b") is not None else t.get("wall_b"),
            "time B/A": t.get("ratio"),
        })  # fmt: skip
    return pd.DataFrame(rows)


def _label(column: str) -> str:
    """The result file's name of a shared table's identifying column."""
    plain = column.removesuffix(ROW_SUFFIX)
    return plain if plain in COMPUTED else column


def _row_labels(table: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """ "k=v k=v …" per row from the identifying columns (missing values left out)."""
    columns = [as_text(table[k], labelled=_label(k)) for k in keys]
    if not columns:
        return [""] * len(table)
    return [" ".join(filter(None, parts)) for parts in zip(*columns, strict=True)]


def row_table(
    result: Comparison, only_flagged: bool = False, limit: int | None = None, moved: bool = False
) -> pd.DataFrame:
    """Shared rows of every file (only the flagged ones, or if ``moved`` only those whose value
    differs, timings left out), flagged exact and non-finite changes first, then largest |z|.

    Returns
    -------
    DataFrame with columns ``file``, ``row`` (its identifying columns), ``A``, ``B``, ``B − A``,
    ``SE``, ``z``, ``flag``.
    """
    parts = []
    for f in result.files:
        table = f.flagged if only_flagged else f.shared
        if moved:  # numbers that differ; timings always do (their ratio is in the summary)
            differs = (table["value_a"] != table["value_b"]) & (table["kind"] != "timing")
            table = table[differs & (table["diff"].notna() | (table["kind"] == "non-finite"))]
        if not len(table):
            continue
        keys = [c for c in table.columns if c not in (*COMPUTED, "experiment", "figure")]
        by_value = table["kind"].isin(["exact", "non-finite"])
        parts.append(pd.DataFrame({
            "file": f.name,
            "row": _row_labels(table, keys),
            "A": table["value_a"].to_numpy(),
            "B": table["value_b"].to_numpy(),
            "B − A": table["diff"].to_numpy(),
            "SE": table["se"].to_numpy(),
            "z": table["z"].to_numpy(),
            "flag": np.where(table["flagged"], "✗", np.where(table["kind"] == "timing", "time",
                                                             "")),
            "_order": np.where(by_value, np.where(table["flagged"], np.inf, np.nan),
                               np.abs(table["z"].fillna(0.0))),
        }))  # fmt: skip
    if not parts:
        return pd.DataFrame(columns=["file", "row", "A", "B", "B − A", "SE", "z", "flag"])
    out = pd.concat(parts, ignore_index=True)
    out = out.sort_values("_order", ascending=False, kind="stable").drop(columns="_order")
    return out.head(limit) if limit is not None else out


def changed_rows(result: Comparison, which: str) -> pd.DataFrame:
    """``which`` = "new", "missing", "outside_a" or "outside_b": those rows of every file (file,
    row, value)."""
    parts = []
    for f in result.files:
        table = getattr(f, which)
        if not len(table):
            continue
        keys = [c for c in table.columns if c not in (*MEASURED, "experiment", "figure")]
        parts.append(pd.DataFrame({
            "file": f.name,
            "row": _row_labels(table, keys),
            "value": table["value"].to_numpy(dtype=float),
        }))  # fmt: skip
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["file", "row", "value"])  # fmt: skip


def config_table(result: Comparison) -> pd.DataFrame:
    """Every config key that differs: file, key, value in A, value in B."""
    rows = [
        {"file": f.name, "key": k, "A": shown_value(k, va), "B": shown_value(k, vb)}
        for f in result.differing()
        for k, (va, vb) in sorted(f.config_diff.items(), key=lambda kv: str(kv[0]))
    ]
    return pd.DataFrame(rows, columns=["file", "key", "A", "B"])


def _md_text(value: object) -> str:
    """Text read from result files (a name, a config value) as markdown shows it: as text,
    never as HTML (``&``, ``<`` and ``>`` as entities, as in REPORT.md)."""
    return escape(str(value), quote=False)


def _md_code(path: str) -> str:
    """A path as code (as text where a backquote in it would end the code)."""
    return f"`{path}`" if "`" not in path else _md_text(path)


def _md_cell(value: Any) -> str:
    """A value as table text (empty for a missing one; the table escapes it)."""
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else f"{value:.4g}"
    return _md_text(value)


def _md_table(frame: pd.DataFrame) -> str:
    if not len(frame):
        return "(none)\n"
    rows = ([_md_cell(v) for v in row] for row in frame.itertuples(index=False))
    return "\n".join(markdown_table([_md_text(c) for c in frame.columns], rows))


def summary_line(result: Comparison) -> str:
    """The counts of the comparison in one sentence."""
    outside = sum(f.outside for f in result.files)
    return (
        f"{result.tests} rows with standard errors tested at z = {result.z:g} family-wise "
        f"({result.method}; per-row |z| ≥ {result.per_row_z():.2f} at Bonferroni's level): "
        f"{result.flagged_count()} flagged, {result.missing_count()} missing"
        + (f", {outside} outside the other side's config" if outside else "")
        + (f", {len(result.only_a)} file(s) of A missing in B" if result.only_a else "")
    )


def markdown(result: Comparison, a: str, b: str) -> str:
    """The whole comparison as a markdown document (every shared row included)."""
    out = [
        f"# rfbench compare: {_md_code(a)} (A) vs {_md_code(b)} (B)\n",
        summary_line(result) + ".\n",
        "## Files\n",
        _md_table(summary_table(result)),
    ]
    if result.only_a or result.only_b:
        out += ["\nOnly in A: " + (_md_text(", ".join(result.only_a)) or "none") + "  \n"
                "Only in B: " + (_md_text(", ".join(result.only_b)) or "none") + "\n"]  # fmt: skip
    if result.differing():
        out += ["\n## Configs that differ\n",
                "Only the rows both runs have are compared; the others are *outside* the other "
                "run's config, not missing; no time B/A is formed.\n",
                _md_table(config_table(result))]  # fmt: skip
    out += ["\n## Flagged rows\n", _md_table(row_table(result, only_flagged=True))]
    out += ["\n## Missing rows (in A, not in B)\n", _md_table(changed_rows(result, "missing"))]
    out += ["\n## New rows (in B, not in A)\n", _md_table(changed_rows(result, "new"))]
    if any(f.outside for f in result.files):
        out += ["\n## Rows outside the other config\n",
                "In A only:\n\n", _md_table(changed_rows(result, "outside_a")),
                "\nIn B only:\n\n", _md_table(changed_rows(result, "outside_b"))]  # fmt: skip
    out += ["\n## Every shared row\n", _md_table(row_table(result))]
    return "\n".join(out)
