"""Markdown building blocks shared by the report's writers (render, summary, findings, beyond).

A leaf module: it imports nothing from :mod:`rfbench.present.report`, so no writer depends on
another.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path


def cell(text: object) -> str:
    """Text safe inside a markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def natural(figure_id: str) -> list[object]:
    """Sort key putting hrf-fig2 before hrf-fig10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", figure_id)]


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A markdown table (and a blank line after it)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def rel_path(path: Path, start: Path) -> str:
    """``path`` relative to the folder ``start``, with forward slashes (for links)."""
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()
