"""Building the report (:class:`Report`: every number and claim evaluated, with the reasons) and
writing its markdown files."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rfbench.compute.checks import UserError
from rfbench.present import reference
from rfbench.present.report.claims import evaluate_claim
from rfbench.present.report.numbers import evaluate_number, with_family_wise
from rfbench.present.report.reasons import FilledReason, fill, resolve
from rfbench.present.report.rows import load_folder
from rfbench.present.report.verdicts import (
    ClaimResult,
    NumberResult,
    beside_primary,
    depends_on_reading,
)


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
    """
    from rfbench.compute.results import atomic_write
    from rfbench.present.report.render import TABLES_FILE, render_markdown, render_tables

    report = build_report(results)
    path = Path(out) if out else Path(results) / "REPORT.md"
    fig_dir = Path(figures) if figures else Path(results) / "figures"
    text = render_markdown(report, path, fig_dir)
    tables = render_tables(report)
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    atomic_write(path.parent / TABLES_FILE, lambda tmp: tmp.write_text(tables, encoding="utf-8"))
    return path, report
