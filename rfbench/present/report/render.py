"""The markdown of ``REPORT.md`` and ``REPORT-tables.md``: a function of the results and the
reference data only (no timestamp of its own). A partial run's report names the figures it checks
that no result row carries, each with the command that produces it (and the data to fetch when
``rfbench reproduce`` skipped it).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from rfbench.compute.skipped import skipped_fixes, skipped_names
from rfbench.present import reference
from rfbench.present.report.beyond import beyond_section
from rfbench.present.report.checks import fmt_num
from rfbench.present.report.downstream_similarity import HEADING as DOWNSTREAM
from rfbench.present.report.downstream_similarity import lm_section, lm_summary, similarity_section
from rfbench.present.report.markdown import link_target, natural, table
from rfbench.present.report.numbers import printed_literal
from rfbench.present.report.summary import findings, method, provenance_line, summary
from rfbench.present.report.verdicts import (
    DIFFERS,
    MANUAL,
    NO_MATCH,
    NOT_COMPARABLE,
    NOT_REPRODUCIBLE,
    WITHIN_NOISE,
    Z_CI,
    ClaimResult,
    NumberResult,
)

if TYPE_CHECKING:
    from rfbench.present.report import Report


def _figure_links(report: Report, paper: str, out_dir: Path, fig_dir: Path) -> list[str]:
    entries = [r.entry for r in [*report.numbers, *report.claims] if r.entry.paper == paper]
    ids = {e.figure for e in entries if e.figure}
    if fig_dir.is_dir():
        ids |= {p.stem for p in fig_dir.glob(f"{paper}-*.png")}
    drawn = [i for i in sorted(ids, key=natural) if (fig_dir / f"{i}.png").is_file()]
    links = [f"[{i}]({link_target(fig_dir / f'{i}.png', out_dir)})" for i in drawn]
    return [f"Figures: {' · '.join(links)}" if links else "Figures: none drawn.", ""]


def _z(r: NumberResult) -> str:
    if r.z is None:
        return ""
    text = "∞" if math.isinf(r.z) else f"{r.z:+.2f}"
    return text + (" †" if r.tolerance_based else "")


def _ci(r: NumberResult) -> str:
    """ours − paper with its 95 % confidence interval (printed units; on the ratio scale for a
    ``ratio_to`` number), from the combined standard error of z."""
    if r.diff is None or r.diff_se is None or not math.isfinite(r.diff):
        return ""
    half = Z_CI * r.diff_se
    if not math.isfinite(half) or half == 0:
        return f"{r.diff:+.3g}"
    return f"{r.diff:+.3g} [{r.diff - half:+.3g}, {r.diff + half:+.3g}]"


def paper_value(e: reference.NumberEntry) -> str:
    """The published value as printed, with its ± where the paper gives one."""
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


#: Verdicts a number table in REPORT.md lists row by row; the others (among them the grid
#: points a partial run lacks, "not run") are counted there and listed in the companion file of
#: full tables (``REPORT-tables.md``).
SHOWN_VERDICTS = frozenset({WITHIN_NOISE, DIFFERS, NOT_COMPARABLE, NO_MATCH})
#: A table up to this many rows is shown whole in REPORT.md.
SHORT_TABLE = 8
#: The columns of a number table.
NUMBER_HEADER = "id|entry|paper|ours ± se|ours − paper [95 % CI]|z|verdict|why".split("|")
#: The companion file of full tables, beside REPORT.md.
TABLES_FILE = "REPORT-tables.md"


def anchor(text: str) -> str:
    """A GitHub-style anchor of a heading."""
    return re.sub(r"[^a-z0-9 _-]", "", text.lower()).strip().replace(" ", "-")


def _number_section(results: list[NumberResult], figure: str, full: bool = True) -> list[str]:
    """One table of published numbers; with ``full`` false, agreeing rows of a long table are
    counted and linked to the full table in :data:`TABLES_FILE`."""
    entries = [r.entry for r in results]
    prefix = os.path.commonprefix([e.source for e in entries])
    cut = prefix.rfind(", ")
    prefix = prefix[: cut + 2] if cut >= 0 and len(entries) > 1 else ""
    first = entries[0]
    title = f"{figure}: {prefix.rstrip(', ') or first.source}"
    lines = [f"#### {title}", ""]
    unit = f" ({first.unit})" if first.unit else ""
    lines += [f"{first.quantity}{unit}.", ""] if first.quantity else []
    shown = results
    if not full and len(results) > SHORT_TABLE:
        shown = [r for r in results if r.verdict in SHOWN_VERDICTS]
        hidden = Counter(r.verdict for r in results if r.verdict not in SHOWN_VERDICTS)
        counts = ", ".join(f"{n} {v}" for v, n in sorted(hidden.items()))
        every = f"(every row: [{TABLES_FILE}]({TABLES_FILE}#{anchor(title)}))"
        head = f"{len(results)} numbers" + (f": {counts}" if counts else ", all below")
        other = f"; the other {len(shown)} below" if counts and shown else ""
        lines += [f"{head}{other} {every}.", ""]
    if shown:
        rows = [
            [
                f"`{r.entry.id}`",
                r.entry.source[len(prefix) :],
                paper_value(r.entry),
                _ours(r),
                _ci(r),
                _z(r),
                r.verdict,
                r.detail,
            ]
            for r in shown
        ]
        lines += table(NUMBER_HEADER, rows)
    notes = [("Note", [e.note for e in entries]), ("Spec", [e.spec_note for e in entries])]
    for label, texts in notes if full or len(results) <= SHORT_TABLE else notes[:1]:
        for text in sorted({t for t in texts if t}):
            lines += [f"> **{label}.** {' '.join(text.split())}", ""]
    return lines


def _numbers(results: list[NumberResult], full: bool = True) -> list[str]:
    """A paper's published numbers, per figure and quantity (not-reproducible ones apart)."""
    live = [r for r in results if r.verdict != NOT_REPRODUCIBLE]
    if not live:
        return []
    lines = ["### Published numbers", ""]
    tables: dict[tuple[str, str, str], list[NumberResult]] = {}
    for r in live:
        tables.setdefault((r.entry.figure, r.entry.quantity, r.entry.unit), []).append(r)
    for (fig, _, _), group in sorted(tables.items(), key=lambda kv: natural(kv[0][0])):
        lines += _number_section(group, fig, full)
    return lines


def _not_reproducible(report: Report, full: bool) -> list[str]:
    """The numbers and claims not reproducible on a CPU: one line per figure (``full``: their
    tables)."""
    dead = [r for r in report.numbers if r.verdict == NOT_REPRODUCIBLE]
    claims = [r for r in report.claims if r.verdict == NOT_REPRODUCIBLE]
    if not dead and not claims:
        return []
    lines = ["## Appendix: not reproducible on a CPU", ""]
    if not full:  # the figures and their counts, the claims (reasons in the tables)
        lines += [
            f"{len(dead)} published numbers and {len(claims)} claims need GPU/TPU-scale "
            f"training; they are listed, not counted as failures (every row: "
            f"[{TABLES_FILE}]({TABLES_FILE}#appendix-not-reproducible-on-a-cpu)).",
            "",
        ]
        n = Counter(r.entry.figure for r in dead)
        counts = ", ".join(f"{fig or 'other'} ({n[fig]})" for fig in sorted(n, key=natural))
        ids = ", ".join(f"`{r.entry.id}`" for r in claims)
        lines.append(f"Numbers by figure: {counts}." + (f" Claims: {ids}." if ids else ""))
        return lines + [""]
    for fig in sorted({r.entry.figure for r in dead}, key=natural):
        group = [r for r in dead if r.entry.figure == fig]
        reasons = "; ".join(sorted({r.detail for r in group}))
        lines += [f"### {fig or 'other'}: {len(group)} numbers", "", f"{reasons}.", ""]
        rows = [[f"`{r.entry.id}`", r.entry.source, paper_value(r.entry), r.verdict] for r in group]
        lines += table(["id", "entry", "paper", "verdict"], rows)
    if claims:
        rows = [[f"`{r.entry.id}`", r.entry.statement, r.verdict, r.detail] for r in claims]
        lines += ["### Claims", "", *table(["id", "claim", "verdict", "why"], rows)]
    return lines + [""]


def _claims(results: list[ClaimResult]) -> list[str]:
    results = [r for r in results if r.verdict != NOT_REPRODUCIBLE]
    if not results:
        return []
    rows = [
        [
            f"`{r.entry.id}`",
            r.entry.figure,
            r.entry.statement,
            r.entry.check.kind,
            r.verdict + (" ⚠" if r.surprise else ""),
            "; ".join(t for t in (r.surprise, r.detail) if t),
        ]
        for r in results
    ]
    header = ["id", "figure", "claim", "check", "verdict", "why"]
    return ["### Claims", "", *table(header, rows)]


def _reasons(report: Report, paper: str) -> list[str]:
    """Each measured root cause of the paper once, with the rows it explains (its numbers are
    read from the results: :mod:`rfbench.present.report.build`)."""
    mine = [r for r in report.reasons if r.key.startswith(f"{paper}-reason-")]
    if not mine:
        return []
    lines = ["### Reasons", ""]
    for r in mine:
        state = " — **cause not established**" if not r.established else ""
        lines += [
            f'<a id="{r.key}"></a>**{r.key}**{state} (explains {len(r.ids)}: '
            + ", ".join(f"`{i}`" for i in r.ids)
            + ")",
            "",
        ]
        if not r.measured:
            lines += [f"Not measured here: these results lack {r.needs} that it reads.", ""]
            continue
        lines += [r.text, ""]
        if r.reading:
            lines += [f"*Reading*: {r.reading}", ""]
    return lines


def _errata_line(errata: list[reference.ErratumEntry]) -> list[str]:
    """A paper's errata in REPORT.md: their count by category and a link to the full table in
    :data:`TABLES_FILE` (those that change what the results show are in the Findings)."""
    if not errata:
        return []
    counts = Counter(e.category for e in errata)
    text = ", ".join(f"{n} {cat}" for cat, n in sorted(counts.items()))
    link = f"[{TABLES_FILE}]({TABLES_FILE}#{anchor(f'{errata[0].paper} errata')})"
    return [f"**Errata**: {len(errata)} ({text}); every one, printed and corrected: {link}.", ""]


def checked_figures(report: Report) -> list[str]:
    """The figures with a number or claim the results can decide, in natural order."""
    results = [*report.numbers, *report.claims]
    ids = {r.entry.figure for r in results if r.verdict not in (NOT_REPRODUCIBLE, MANUAL)}
    return sorted(ids - {""}, key=natural)


def missing_figures(report: Report) -> list[str]:
    """The checked figures no result row carries."""
    present = set(report.figures)
    return [f for f in checked_figures(report) if f not in present]


def config_of(figure: str) -> str:
    """The config file that produces a paper figure: ``configs/<paper>/<rest>.toml``."""
    paper, _, rest = figure.partition("-")
    return f"configs/{paper}/{rest}.toml"


def coverage(report: Report) -> list[str]:
    """The *Not in these results* section: what ran, and each missing figure with the command
    that produces it; empty when every checked figure is in the results."""
    missing = missing_figures(report)
    if not missing:
        return []
    checked = checked_figures(report)
    ran = [f for f in checked if f not in missing]
    held = f"{len(ran) or 'none'} of the {len(checked)} figures and tables the report checks"
    held += f" ({', '.join(ran)})" if ran else ""
    skipped, fixes = skipped_names(report.results_dir), skipped_fixes(report.results_dir)
    lines = [
        "## Not in these results",
        "",
        f"These results hold {held}. The other {len(missing)} are left out of the tables below "
        "(the summary counts their numbers and claims as *not run*); `rfbench reproduce` runs "
        "every config, or one at a time:",
        "",
    ]
    for figure in missing:
        line = f"- `{figure}`: `rfbench run {config_of(figure)}`"
        if figure in skipped:
            data = skipped[figure]
            line += f" (skipped: {data} is not here; get it with `{fixes.get(data, '')}`)"
        lines.append(line)
    return [*lines, ""]


def render_markdown(report: Report, out_path: Path, fig_dir: Path) -> str:
    """The whole ``REPORT.md`` (links relative to ``out_path``'s folder)."""
    out_dir = out_path.parent
    absent = set(missing_figures(report))
    lines = [
        "# rfbench report: the papers' numbers and claims vs ours",
        "",
        provenance_line(report, out_dir),
        "",
        *coverage(report),
        *findings(report),
        *summary(report),
        *method(),
    ]
    for paper in reference.papers():
        head = reference.header(paper)
        lines += [f"## {paper}: {head['title']}", ""]
        if head.get("spec"):
            lines += [f"Setup and readings: `{head['spec']}` in the rfbench repository.", ""]
        lines += _figure_links(report, paper, out_dir, fig_dir)
        numbers = [r for r in report.numbers if r.entry.paper == paper]
        lines += _numbers([r for r in numbers if r.entry.figure not in absent], full=False)
        claims = [r for r in report.claims if r.entry.paper == paper]
        lines += _claims([r for r in claims if r.entry.figure not in absent])
        lines += _reasons(report, paper)
        lines += _errata_line([e for e in report.errata if e.paper == paper])
    lines += beyond_section(report.results_dir, out_dir, fig_dir)
    downstream = lm_summary(report.results_dir) + similarity_section(report.results_dir, True)
    lines += [DOWNSTREAM, "", *downstream] if downstream else []  # issue 41
    lines += _not_reproducible(report, full=False)
    return "\n".join(lines).rstrip() + "\n"


def render_tables(report: Report) -> str:
    """The companion file: every published number's row, and the appendix in full."""
    lines = [
        "# rfbench report: every published number",
        "",
        "The full tables behind `REPORT.md` (generated with it by `rfbench report`).",
        "",
    ]
    for paper in reference.papers():
        mine = [r for r in report.numbers if r.entry.paper == paper]
        if any(r.verdict != NOT_REPRODUCIBLE for r in mine):
            lines += [f"## {paper}", "", *_numbers(mine, full=True)]
        errata = [
            [f"`{e.id}`", e.source, e.printed, e.corrected, e.magnitude, e.category]
            for e in report.errata
            if e.paper == paper
        ]
        if errata:
            header = ["id", "where", "printed", "corrected", "magnitude", "category"]
            lines += [f"## {paper} errata", "", *table(header, errata)]
    tables = lm_section(report.results_dir) + similarity_section(report.results_dir)
    lines += [DOWNSTREAM, "", *tables] if tables else []  # issue 41: the causal LM's tables
    lines += _not_reproducible(report, full=True)
    return "\n".join(lines).rstrip() + "\n"
