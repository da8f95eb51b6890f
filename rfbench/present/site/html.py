"""Small HTML helpers: escaping, tables, the page frame shared by every page of the site."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape

import pandas as pd

GOOD = {"reproduced", "replayed", "holds", "ordering confirmed", "verified analytically"}
NOISE = {"within noise", "consistent"}
BAD = {"differs", "does not hold"}


def esc(value: object) -> str:
    return escape("" if value is None else str(value))


def script_json(value: object) -> str:
    """``value`` as JSON safe inside a ``<script>`` element: no character there can end it.

    ``<``, ``>``, ``&`` and the JavaScript line separators become ``\\uXXXX`` escapes, which JSON
    and JavaScript read back as the same characters.
    """
    text = json.dumps(value, allow_nan=False)
    for char in ("<", ">", "&", "\u2028", "\u2029"):
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def verdict_badge(verdict: str) -> str:
    """A coloured label for a verdict."""
    kind = "good" if verdict in GOOD else "noise" if verdict in NOISE else "bad"
    kind = kind if verdict in GOOD | NOISE | BAD else "other"
    return f'<span class="v v-{kind}">{esc(verdict)}</span>'


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """An HTML table; cells are given already escaped (so they may hold markup)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "\n".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


def _cell(v: object) -> str:
    """A table cell of a data frame's value: a float right-aligned (6 significant digits)."""
    if isinstance(v, float):
        return f'<td class="num">{"" if pd.isna(v) else f"{v:.6g}"}</td>'
    return f"<td>{esc('' if v is None or v is pd.NA else v)}</td>"


def frame_table(df: pd.DataFrame, limit: int = 400) -> str:
    """A data frame as a scrollable table (numbers right-aligned, at most ``limit`` rows)."""
    shown = df.head(limit)
    head = "".join(f"<th>{esc(c)}</th>" for c in shown.columns)
    rows = ["<tr>" + "".join(map(_cell, rec)) + "</tr>" for rec in shown.itertuples(index=False)]
    note = (
        f'<p class="muted">First {limit} of {len(df)} rows; all rows are in the parquet file.</p>'
    )
    note = note if len(df) > limit else ""
    body = "\n".join(rows)
    table_html = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="scroll">{table_html}</div>{note}'


def page(title: str, body: str, root: str, scripts: Sequence[str] = ()) -> str:
    """A whole page; ``root`` is the relative path from the page to the site's top folder."""
    tags = "".join(f'<script src="{root}assets/{s}"></script>' for s in scripts)
    nav = (
        f'<a class="brand" href="{root}index.html">rfbench results</a>'
        f'<a href="{root}index.html#figures">Figures</a>'
        f'<a href="{root}index.html#results">Result files</a>'
        f'<a href="{root}verdicts.html">Verdicts</a>'
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)} · rfbench</title>"
        f'<link rel="stylesheet" href="{root}assets/site.css">{tags}</head>'
        f"<body><header>{nav}</header><main>{body}</main></body></html>"
    )
