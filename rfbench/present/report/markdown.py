"""Markdown building blocks shared by the report's writers (tables: rfbench.compute.text).

A leaf module: it imports nothing from :mod:`rfbench.present.report`, so no writer depends on
another.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd

from rfbench.compute.results import find_result, load_results
from rfbench.compute.text import markdown_table as table

__all__ = [
    "escape_frame", "escape_markup", "link_target", "load_named", "natural", "pm", "rel_path",
    "table",
]  # fmt: skip


def natural(figure_id: str) -> list[object]:
    """Sort key putting hrf-fig2 before hrf-fig10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", figure_id)]


def pm(
    value: float | None,
    se: float | None = None,
    digits: int = 3,
    se_digits: int = 1,
    missing: str = "—",
) -> str:
    """``value ± se`` to ``digits`` (``se_digits``) significant digits, the ± left out when the
    standard error is unknown or 0; ``missing`` for a value that is not finite."""
    if value is None or not math.isfinite(value):
        return missing
    text = f"{value:.{digits}g}"
    return (
        f"{text} ± {se:.{se_digits}g}" if se is not None and math.isfinite(se) and se > 0 else text
    )


def rel_path(path: Path, start: Path) -> str:
    """``path`` relative to the folder ``start``, with forward slashes (for links)."""
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def link_target(path: Path, start: Path) -> str:
    """``path`` relative to the folder ``start`` as a markdown link's target: percent-encoded, so
    that a space, a parenthesis or a ``#`` in a folder's name ends no link early."""
    return quote(rel_path(path, start), safe="/._-~")


def escape_markup(value: Any) -> Any:
    """``value`` with ``&``, ``<`` and ``>`` of every string in it (through dicts, lists and
    tuples) as HTML entities: text read from a result file shows in Markdown as text, never as
    HTML (a ``<script>`` in a ``fit_text`` or a provenance field)."""
    if isinstance(value, str):
        return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if isinstance(value, dict):
        return {k: escape_markup(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(escape_markup(v) for v in value)
    return value


def escape_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with :func:`escape_markup` applied to each string cell that needs it (a copy
    where any does; the frame itself otherwise)."""
    out = rows
    for c in rows.columns:
        if pd.api.types.is_numeric_dtype(rows[c]):
            continue
        marked = rows[c].map(lambda v: isinstance(v, str) and any(ch in v for ch in "<>&"))
        if marked.any():
            if out is rows:
                out = rows.astype({c: object}).copy()
            out[c] = out[c].astype(object)
            out.loc[marked, c] = rows.loc[marked, c].map(escape_markup)
    return out


def load_named(results_dir: Path, name: str) -> pd.DataFrame | None:
    """The rows of the result file ``name`` in any experiment folder (None if absent), its
    strings escaped (:func:`escape_frame`)."""
    path = find_result(results_dir, name)
    return escape_frame(load_results(path)) if path is not None else None
