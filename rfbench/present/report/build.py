"""Building the report (:class:`Report`: every number and claim evaluated, with the reasons) and
writing its markdown files.

Measured reasons (:class:`rfbench.present.reference.Reason`) have every number they quote read
from the results when the report is rendered; a reason whose values the results lack is *not
measured* and names the figures it would read, never a stale number.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rfbench.compute.checks import UserError
from rfbench.compute.text import first_sentence
from rfbench.present import reference
from rfbench.present.reference import PLACEHOLDER, Reason, ReasonValue
from rfbench.present.report.claims import evaluate_claim
from rfbench.present.report.frames import plain
from rfbench.present.report.numbers import evaluate_number, with_family_wise
from rfbench.present.report.rows import ResultSet, load_folder, pick
from rfbench.present.report.verdicts import (
    MARK,
    ClaimResult,
    NumberResult,
    beside_primary,
    depends_on_reading,
)


@dataclass(frozen=True)
class FilledReason:
    """A reason with its numbers read from the results."""

    key: str
    ids: tuple[str, ...]
    text: str
    reading: str
    established: bool
    #: figures (or number entries) whose results the reason reads but the folder lacks
    missing: tuple[str, ...] = ()

    @property
    def measured(self) -> bool:
        """Whether every number the reason quotes was read from the results."""
        return not self.missing

    @property
    def needs(self) -> str:
        """What a reason not measured lacks, e.g. "rows of simrf-table2, simrf-table2-released"."""
        return "rows of " + ", ".join(self.missing)


class MissingValue(LookupError):
    """A reason value the results do not give (the reason prints "n/a")."""


def _of(value: ReasonValue, numbers: Mapping[str, NumberResult], ids: tuple[str, ...]) -> float:
    found = []
    for nid in ids:
        res = numbers.get(nid)
        if res is None:
            raise MissingValue(f"{nid} is not a number entry")
        paper = res.entry.scaled
        got = {
            "ours": res.ours,
            "se": res.stderr,
            "paper": paper,
            "z": res.z,
            "diff": None if res.ours is None else res.ours - paper,
            "ratio": None if res.ours is None or paper == 0 else res.ours / paper,
        }[value.what]
        if got is None or not math.isfinite(float(got)):
            raise MissingValue(f"{nid}: {res.verdict}")
        found.append(float(got))
    over = {"min": min, "count": len, "mean": lambda f: sum(f) / len(f)}.get(value.over, max)
    return float(over(found))


def _row(result: ResultSet, selector: Mapping[str, Any], stderr: bool = False) -> float:
    sel = dict(selector)
    rows = result.experiment(str(sel["experiment"]), sel.get("figure"))
    # an aggregate reduces over its parameter only (a data set's d and tuned σ do not split it)
    picked = pick(rows, sel, keep=["estimator"] if "aggregate" in sel else None)
    if not picked.ok:
        raise MissingValue(picked.detail)
    if len(picked.rows) != 1:
        raise MissingValue(f"{len(picked.rows)} rows match {sorted(sel.items())}")
    got = plain(picked.rows.iloc[0]["stderr" if stderr else "value"])
    if got is None:
        raise MissingValue("null value")
    return float(got)


def value_of(value: ReasonValue, result: ResultSet, numbers: Mapping[str, NumberResult]) -> float:
    """The number a reason quotes, from the evaluated numbers or the result rows."""
    if value.of:
        got = _of(value, numbers, value.of)
        if value.over_of:
            got /= _of(value, numbers, value.over_of)
        return got * value.scale
    got = _row(result, value.row, value.stderr)
    if value.over_row:
        got /= _row(result, value.over_row)
    if value.minus_row:
        got -= _row(result, value.minus_row)
    if value.square:
        got *= got
    return got * value.scale


def fill_text(text: str, values: Mapping[str, float | str]) -> str:
    """``text`` with each placeholder replaced by its value (format spec default ``.4g``)."""

    def one(m: Any) -> str:
        v = values[m.group(1)]
        return v if isinstance(v, str) else format(v, m.group(2) or ".4g")

    return PLACEHOLDER.sub(one, text)


def sources(value: ReasonValue, numbers: Mapping[str, NumberResult]) -> list[str]:
    """The figures a reason value reads (a number entry's figure, a row selector's ``figure``;
    the entry id where there is no figure)."""
    out = []
    for nid in value.of + value.over_of:
        res = numbers.get(nid)
        out.append(res.entry.figure if res is not None and res.entry.figure else nid)
    for sel in (value.row, value.over_row, value.minus_row):
        if sel:
            out.append(str(sel.get("figure") or sel.get("experiment", "")))
    return [s for s in out if s]


def fill(reason: Reason, result: ResultSet, numbers: Mapping[str, NumberResult]) -> FilledReason:
    """A reason with every placeholder read from ``result`` and ``numbers``; a value they do not
    give leaves the reason not measured (its text is then not for print)."""
    values: dict[str, float | str] = {}
    missing: list[str] = []
    for v in reason.values:
        try:
            values[v.name] = value_of(v, result, numbers)
        except MissingValue:
            values[v.name] = "?"
            missing += sources(v, numbers)
    return FilledReason(
        reason.key,
        reason.ids,
        fill_text(reason.text, values),
        fill_text(reason.reading, values),
        reason.established,
        tuple(dict.fromkeys(missing)),
    )


def resolve(detail: str, filled: Mapping[str, FilledReason]) -> str:
    """``detail`` with each reason marker replaced by the reason's key and first sentence (a
    reason not measured: the key and the results it needs)."""
    for key, r in filled.items():
        if r.measured:
            state = "" if r.established else "cause not established: "
            text = f"{state}{first_sentence(r.text, clause=True, limit=140)} [{key}]"
        else:
            text = f"[{key}] not measured (these results lack {r.needs})"
        detail = detail.replace(MARK.format(key), text)
    return detail


@dataclass(frozen=True)
class Report:
    """Every reference entry with its verdict, and where the results came from."""

    results_dir: Path
    numbers: tuple[NumberResult, ...]
    claims: tuple[ClaimResult, ...]
    errata: tuple[reference.ErratumEntry, ...]
    files: tuple[Path, ...] = ()
    provenance: tuple[dict[str, Any], ...] = ()
    problems: tuple[str, ...] = ()
    reasons: tuple[FilledReason, ...] = ()
    #: the figure ids the result rows carry (a partial run's report names the missing ones)
    figures: tuple[str, ...] = ()

    def number_counts(self, paper: str | None = None, sampled: bool | None = None) -> Counter[str]:
        """Verdict → number of published numbers (of one ``paper`` if given; ``sampled``: only
        those whose value is a sample mean (True) or a computation (False)). A second comparison
        of a printed number (``second_of``: a replay of released code) is not counted."""
        return Counter(
            r.verdict
            for r in self.numbers
            if paper in (None, r.entry.paper)
            and not r.entry.second_of
            and sampled in (None, r.sampled)
        )

    def claim_counts(self, paper: str | None = None) -> Counter[str]:
        """Verdict → number of claims (of one ``paper`` if given)."""
        return Counter(r.verdict for r in self.claims if paper in (None, r.entry.paper))

    def surprises(self) -> list[ClaimResult]:
        """Claims whose verdict contradicts the reference's ``expect``."""
        return [r for r in self.claims if r.surprise]


def build_report(results: str | Path = "results") -> Report:
    """Evaluate every reference entry on the results in ``results`` (missing ones: "not run")."""
    folder = Path(results)
    if not folder.is_dir():
        raise UserError(f"results folder {str(folder)!r} does not exist")
    found = load_folder(folder)
    entries = reference.load()
    errata = [e for e in entries if isinstance(e, reference.ErratumEntry)]
    numbers = [
        evaluate_number(e, found, errata) for e in entries if isinstance(e, reference.NumberEntry)
    ]
    numbers = with_family_wise(numbers, errata)
    by_id = {r.entry.id: r for r in numbers}
    claims = [
        evaluate_claim(e, found, by_id, errata)
        for e in entries
        if isinstance(e, reference.ClaimEntry)
    ]
    filled = {r.key: fill(r, found, by_id) for r in reference.reasons()}
    numbers = beside_primary(numbers)
    claims = depends_on_reading(beside_primary(claims), claims, errata)
    numbers = [replace(r, detail=resolve(r.detail, filled)) for r in numbers]
    claims = [replace(r, detail=resolve(r.detail, filled)) for r in claims]
    figures = found.rows["figure"].dropna() if "figure" in found.rows else []
    return Report(
        folder,
        tuple(numbers),
        tuple(claims),
        tuple(errata),
        found.files,
        found.provenance,
        found.problems,
        tuple(filled.values()),
        tuple(sorted({str(f) for f in figures} - {""})),
    )


def write_report(
    results: str | Path = "results",
    out: str | Path | None = None,
    figures: str | Path | None = None,
) -> tuple[Path, Report]:
    """Write ``REPORT.md`` (default ``<results>/REPORT.md``) and ``REPORT-tables.md`` beside it,
    linking the drawn figures of ``figures`` (default ``<results>/figures``); return the path and
    the report.

    Either file in the way that rfbench did not write (a user's ``README.md`` given as ``out``, a
    symbolic link) or an ``out`` not ending in ``.md`` is refused before any work
    (:func:`rfbench.present.outputs.check_markdown`).
    """
    from rfbench.compute.results import result_paths
    from rfbench.present.outputs import check_file, check_markdown, write_text
    from rfbench.present.report.render import TABLES_FILE, render_markdown, render_tables

    path = Path(out) if out else Path(results) / "REPORT.md"
    if not Path(results).is_dir():
        raise UserError(f"results folder {str(results)!r} does not exist")
    check_markdown(path)
    check_file(path.parent / TABLES_FILE)
    if not result_paths(results):  # a mistyped folder gets no report of nothing written into it
        raise UserError(f"no result files (*/*.parquet) under {results}")
    report = build_report(results)
    fig_dir = Path(figures) if figures else Path(results) / "figures"
    text = render_markdown(report, path, fig_dir)
    tables = render_tables(report)
    write_text(path, text)
    write_text(path.parent / TABLES_FILE, tables)
    return path, report
