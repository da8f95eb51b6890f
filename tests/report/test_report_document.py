"""The document a researcher reads (issue 16): Findings first, at most ~650 lines, long tables
and the not-reproducible rows in the generated companion file; the family-wise count."""

from __future__ import annotations

import re
from pathlib import Path

from rfbench.present.report.numbers import family_wise
from rfbench.present.report.render import TABLES_FILE
from rfbench.present.report.verdicts import DIFFERS

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_findings_open_the_report_and_it_is_short(committed_markdown: tuple[str, str]) -> None:
    text, _ = committed_markdown
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Findings", "## Summary"]
    # ~650, and a few lines per section of "Does it matter downstream?" (issue 41; its tables
    # are in the companion file)
    assert len(text.splitlines()) <= 670
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


def test_the_family_wise_correction_decides_each_row(committed_report) -> None:  # type: ignore[no-untyped-def]
    report = committed_report
    n, z_bonf, cutoff = family_wise(report.numbers)
    assert 3.2 < z_bonf < 3.6 and n < 100
    members = [r for r in report.numbers if r.in_family]
    assert not any(r.entry.id.startswith("hrf-table3-") for r in members)  # replayed: apart
    for r in members:  # |z| > 3 differs exactly when Holm rejects it
        if r.z is not None and abs(r.z) > 3:
            assert (r.verdict == DIFFERS) == (abs(r.z) >= cutoff), r.entry.id


def test_findings_give_each_claim_the_verdict_word_of_its_row(committed_report) -> None:  # type: ignore[no-untyped-def]
    from rfbench.present.report.summary import findings

    text = "\n".join(findings(committed_report))
    verdicts = {r.entry.id: r.verdict for r in committed_report.claims}
    named = re.findall(r"^- `([a-z0-9.-]+)` \([^)]*\): .*? — \*([a-z ]+)\*", text, re.M)
    assert named, "the Findings name claims with their verdict"
    for cid, word in named:
        assert verdicts[cid] == word, cid
    for cid, verdict in verdicts.items():  # every claim that fails or depends is listed
        if verdict in ("does not hold", "depends on the reading"):
            assert (cid, verdict) in named
    assert "**What reproduced**" in text and "*Replayed*, not reproduced: hrf-table3" in text
