"""The markdown of ``REPORT.md``: summary first, then one section per paper.

The output is a function of the results and the reference data only: entries in reference
order, figures in natural order, and a single provenance line (creation times and git commits
read from the result files' metadata) — no timestamp of its own.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rfbench import reference
from rfbench.report.checks import fmt_num
from rfbench.report.numbers import printed_literal
from rfbench.report.verdicts import (
    NOT_REPRODUCIBLE,
    ClaimResult,
    NumberResult,
)

if TYPE_CHECKING:
    from rfbench.report import Report


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


def _figure_links(report: Report, paper: str, out_dir: Path, fig_dir: Path) -> list[str]:
    ids = {e.figure for e in _entries(report, paper) if e.figure}
    if fig_dir.is_dir():
        ids |= {p.stem for p in fig_dir.glob(f"{paper}-*.png")}
    ids_sorted = sorted(ids, key=natural)
    drawn = [i for i in ids_sorted if (fig_dir / f"{i}.png").is_file()]
    links = [f"[{i}]({rel_path(fig_dir / f'{i}.png', out_dir)})" for i in drawn]
    lines = [f"Figures: {' · '.join(links)}" if links else "Figures: none drawn."]
    return lines + [""]


def _entries(report: Report, paper: str) -> list[reference.Entry]:
    items = [*report.numbers, *report.claims]
    return [r.entry for r in items if r.entry.paper == paper]


def _z(r: NumberResult) -> str:
    if r.z is None:
        return ""
    text = "∞" if math.isinf(r.z) else f"{r.z:+.2f}"
    return text + (" †" if r.tolerance_based else "")


def _paper_value(e: reference.NumberEntry) -> str:
    pm = e.stderr if e.stderr is not None else e.std
    return printed_literal(e) + (f" ± {pm:g}" if pm is not None else "")


def _ours(r: NumberResult) -> str:
    if r.ours is None:
        return ""
    s = r.entry.scale
    text = fmt_num(r.ours / s)
    if r.stderr is not None and math.isfinite(r.stderr):
        text += f" ± {fmt_num(r.stderr / abs(s))}"
    if r.ours_std is not None:
        text += f" (sd {fmt_num(r.ours_std / abs(s))})"
    return text


def _common_prefix(sources: list[str]) -> str:
    prefix = os.path.commonprefix(sources)
    cut = prefix.rfind(", ")
    return prefix[: cut + 2] if cut >= 0 and len(sources) > 1 else ""


def _number_section(results: list[NumberResult], figure: str) -> list[str]:
    entries = [r.entry for r in results]
    prefix = _common_prefix([e.source for e in entries])
    first = entries[0]
    lines = [f"#### {figure}: {prefix.rstrip(', ') or first.source}", ""]
    unit = f" ({first.unit})" if first.unit else ""
    lines += [f"{first.quantity}{unit}.", ""] if first.quantity else []
    rows = [
        [
            f"`{r.entry.id}`",
            r.entry.source[len(prefix) :],
            _paper_value(r.entry),
            _ours(r),
            _z(r),
            r.verdict,
            r.detail,
        ]
        for r in results
    ]
    lines += table(["id", "entry", "paper", "ours ± se", "z", "verdict", "why"], rows)
    for label, texts in (
        ("Note", [e.note for e in entries]),
        ("Spec", [e.spec_note for e in entries]),
    ):
        for text in sorted({t for t in texts if t}):
            lines += [f"> **{label}.** {' '.join(text.split())}", ""]
    return lines


def _numbers(results: list[NumberResult]) -> list[str]:
    if not results:
        return []
    lines = ["### Published numbers", ""]
    live = [r for r in results if r.verdict != NOT_REPRODUCIBLE]
    for fig in sorted({r.entry.figure for r in live}, key=natural):
        tables: dict[tuple[str, str], list[NumberResult]] = {}
        for r in live:
            if r.entry.figure == fig:
                tables.setdefault((r.entry.quantity, r.entry.unit), []).append(r)
        for group in tables.values():
            lines += _number_section(group, fig)
    dead = [r for r in results if r.verdict == NOT_REPRODUCIBLE]
    for fig in sorted({r.entry.figure for r in dead}, key=natural):
        group = [r for r in dead if r.entry.figure == fig]
        reasons = sorted({r.detail for r in group})
        lines += [
            f"<details><summary>{fig or 'other'}: {len(group)} numbers not reproducible here "
            f"({cell('; '.join(reasons))})</summary>",
            "",
        ]
        rows = [
            [f"`{r.entry.id}`", r.entry.source, _paper_value(r.entry), r.verdict] for r in group
        ]
        lines += table(["id", "entry", "paper", "verdict"], rows)
        lines += ["</details>", ""]
    return lines


def _claims(results: list[ClaimResult]) -> list[str]:
    if not results:
        return []
    rows = [
        [
            f"`{r.entry.id}`",
            r.entry.figure,
            r.entry.statement,
            r.entry.check.get("kind", ""),
            r.verdict + (" ⚠" if r.surprise else ""),
            "; ".join(t for t in (r.surprise, r.detail) if t),
        ]
        for r in results
    ]
    header = ["id", "figure", "claim", "check", "verdict", "why"]
    return ["### Claims", "", *table(header, rows)]


def _errata(errata: list[reference.ErratumEntry]) -> list[str]:
    if not errata:
        return []
    rows = [
        [f"`{e.id}`", e.source, e.printed, e.corrected, e.magnitude, e.category] for e in errata
    ]
    header = ["id", "where", "printed", "corrected", "magnitude", "category"]
    return ["### Errata", "", *table(header, rows)]


def render_markdown(report: Report, out_path: Path, fig_dir: Path) -> str:
    """The whole report as markdown (links relative to ``out_path``'s folder)."""
    from rfbench.report.beyond import beyond_section
    from rfbench.report.summary import method, provenance_line, summary

    out_dir = out_path.parent
    lines = [
        "# rfbench report: the papers' numbers and claims vs ours",
        "",
        provenance_line(report, out_dir),
        "",
        *summary(report),
        *method(),
    ]
    for paper in reference.papers():
        head = reference.header(paper)
        lines += [f"## {paper}: {head['title']}", ""]
        if head.get("spec"):
            lines += [f"Setup and readings: `{head['spec']}` in the rfbench repository.", ""]
        lines += _figure_links(report, paper, out_dir, fig_dir)
        lines += _numbers([r for r in report.numbers if r.entry.paper == paper])
        lines += _claims([r for r in report.claims if r.entry.paper == paper])
        lines += _errata([e for e in report.errata if e.paper == paper])
    lines += beyond_section(report.results_dir, out_dir, fig_dir)
    return "\n".join(lines).rstrip() + "\n"
