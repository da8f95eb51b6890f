"""Markdown building blocks shared by the report's writers (tables: rfbench.compute.text).

A leaf module: it imports nothing from :mod:`rfbench.present.report`, so no writer depends on
another.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from rfbench.compute.results import find_result, load_results
from rfbench.compute.text import markdown_table as table

__all__ = ["load_named", "natural", "rel_path", "table"]


def natural(figure_id: str) -> list[object]:
    """Sort key putting hrf-fig2 before hrf-fig10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", figure_id)]


def rel_path(path: Path, start: Path) -> str:
    """``path`` relative to the folder ``start``, with forward slashes (for links)."""
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def load_named(results_dir: Path, name: str) -> pd.DataFrame | None:
    """The rows of the result file ``name`` in any experiment folder (None if absent)."""
    path = find_result(results_dir, name)
    return load_results(path) if path is not None else None
