"""The document a researcher reads (issue 16): Findings first, at most ~650 lines, long tables
and the not-reproducible rows in the generated companion file; the family-wise count."""

from __future__ import annotations

from pathlib import Path

from rfbench.present.report.render import TABLES_FILE
from rfbench.present.report.summary import family_wise, significant

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_findings_open_the_report_and_it_is_short(committed_markdown: tuple[str, str]) -> None:
    text, _ = committed_markdown
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Findings", "## Summary"]
    assert len(text.splitlines()) <= 650
    assert "Offsets whose cause is not established" in text


def test_long_tables_and_the_appendix_live_in_the_companion_file(
    committed_markdown: tuple[str, str],
) -> None:
    text, tables = committed_markdown
    cell = "`hrf-table3-s1-m20-trig-min`"
    assert cell not in text and cell in tables  # a replayed cell: counted, linked
    assert f"]({TABLES_FILE}#" in text
    gpu = "`spectraformer-table3-"
    assert gpu not in text and gpu in tables
    assert "## Appendix: not reproducible on a CPU" in text


def test_the_family_wise_count_excludes_replays_and_flags_chess(committed_report) -> None:  # type: ignore[no-untyped-def]
    report = committed_report
    n, z_bonf, cutoff = family_wise(report)
    assert 3.3 < z_bonf < 3.6 and n < 100
    fw = {r.entry.id for r in significant(report, cutoff)}
    # z = -3.28: beyond 3, below the family-wise threshold for ~90 numbers
    assert "simrf-table2-chess-simrf" not in fw
    assert all(not r.entry.id.startswith("hrf-table3-") for r in significant(report, cutoff))
