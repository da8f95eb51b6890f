"""Rich tables: of rows (the listings) and of DataFrames (headline numbers after a run)."""

from __future__ import annotations

import math
import sys
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:  # pandas is imported by the commands that print frames, not by the CLI's start
    import pandas as pd

# A terminal gets its own width; a pipe or file gets wide rows rather than 80-column wrapping.
console = Console() if sys.stdout.isatty() else Console(width=160)
#: footnotes printed by the running command (cleared when a command starts: rfbench.cli)
FOOTNOTES_SHOWN: set[str] = set()


def _cell(value: object) -> str:
    """A value as the table shows it: text as written (a ``[/red]`` in an estimator's name is no
    rich markup)."""
    return escape(_text(value))


def _text(value: object) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer() and abs(value) < 1e12:
            return str(int(value))
        return f"{value:.4g}"
    if value is None or type(value).__name__ == "NAType":
        return ""
    return str(value)


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    no_wrap: Collection[str] = (),
    right: Collection[str] = (),
) -> None:
    """Print ``rows`` as a rich table of ``columns``: those in ``no_wrap`` never wrap, those in
    ``right`` are right-justified."""
    table = Table(title=title)
    for col in columns:
        table.add_column(col, justify="right" if col in right else "left", no_wrap=col in no_wrap)
    for row in rows:
        table.add_row(*row)
    console.print(table)


def print_frame(frame: pd.DataFrame, title: str, max_rows: int = 30) -> None:
    """Print up to ``max_rows`` rows of ``frame`` as a rich table (empty columns dropped), then
    the footnote in ``frame.attrs["footnote"]`` if any, once per command. ``frame.attrs``
    may also hold a ``caption`` (what the table's values are and which way is better, printed
    under it) and a ``title`` (the run's setting, appended to ``title``)."""
    footnote, caption = frame.attrs.get("footnote"), frame.attrs.get("caption")
    if frame.attrs.get("title"):
        title = f"{title}: {frame.attrs['title']}"
    frame = frame.dropna(axis=1, how="all").head(max_rows)
    # every text as written: a title, a column or a cell holds names from configs and results
    table = Table(title=escape(title), caption=caption and escape(caption), caption_justify="left")
    for column in frame.columns:
        table.add_column(
            escape(str(column)), justify="right" if frame[column].dtype.kind in "fiu" else "left"
        )
    for row in frame.itertuples(index=False):
        table.add_row(*(_cell(v) for v in row))
    console.print(table)
    if footnote and footnote not in FOOTNOTES_SHOWN:  # reproduce: 8 pointwise tables, 1 footnote
        FOOTNOTES_SHOWN.add(footnote)
        console.print(escape(footnote))
