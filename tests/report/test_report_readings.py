"""One verdict per paper sentence, "not comparable" numbers, the ratio scale (issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rfbench.present import reference
from rfbench.present.reference.loader import ReferenceDataError, make_entry
from rfbench.present.report.verdicts import NOT_COMPARABLE

RESULTS = Path(__file__).resolve().parents[2] / "results"


@pytest.fixture(scope="module")
def report(committed_report):  # type: ignore[no-untyped-def]
    return committed_report


def test_other_readings_are_shown_beside_the_primary_and_counted_once(report) -> None:  # type: ignore[no-untyped-def]
    ids = {r.entry.id for r in [*report.numbers, *report.claims]}
    alternatives = [e for e in reference.load() if getattr(e, "reading_of", "")]
    assert alternatives, "the DERF 'about e^k' sentences declare two readings"
    for e in alternatives:
        assert e.id not in ids  # not a verdict of its own
        assert e.reading_of in ids
    primary = next(
        r for r in report.numbers if r.entry.id == "derf-fig2-sderf-sigma05-vs-gerf-cifar10"
    )
    assert "other reading — the maximum over σ" in primary.detail
    total = sum(report.number_counts().values()) + sum(report.claim_counts().values())
    seconds = [e for e in reference.load() if getattr(e, "second_of", "")]
    assert seconds, "the released-code replay compares SimRF Table 2 numbers a second time"
    assert total == len(reference.load()) - len(alternatives) - len(seconds) - sum(
        isinstance(e, reference.ErratumEntry) for e in reference.load()
    )


def test_a_number_hinging_on_an_unstated_setting_is_not_comparable(report) -> None:  # type: ignore[no-untyped-def]
    by_id = {r.entry.id: r for r in report.numbers}
    for nid in ("hrf-table1-wine-orf-reg", "hrf-table1-boston-orf-reg", "cse-fig4-trig-negatives"):
        assert by_id[nid].verdict == NOT_COMPARABLE
    assert "22 to 121: the paper's 89 is inside" in by_id["cse-fig4-trig-negatives"].detail


def test_orf_had_is_the_papers_sorf_on_the_ratio_scale(report) -> None:  # type: ignore[no-untyped-def]
    """HRF Table 1 cites Yu et al. (2016) for ORF-Had, whose Hadamard construction is SORF: the
    primary reading is `sorf` (issue 40.1), the unbiased `orf-fast` is the other reading shown."""
    by_id = {r.entry.id: r for r in report.numbers}
    wine, boston = by_id["hrf-table1-wine-orf-had"], by_id["hrf-table1-boston-orf-had"]
    for row in (wine, boston):
        assert row.entry.match["estimator"] == "trig@sorf"
        assert row.verdict == "differs" and row.z > 10  # SORF/ORF-reg ≈ 3.2 against 1.10
        assert "other reading — ORF-Had as the unbiased Hadamard ORF" in row.detail
        assert any(
            w in row.detail.split("other reading")[-1] for w in ("reproduced", "within noise")
        )
    alternatives = [
        e for e in reference.load() if getattr(e, "reading_of", "") == "hrf-table1-wine-orf-had"
    ]
    assert [e.match["estimator"] for e in alternatives] == ["trig@orf-fast"]


def test_hrf_table1_rows_share_the_ratio_scale(report) -> None:  # type: ignore[no-untyped-def]
    """Every sampled HRF Table 1 cell but ORF-reg is judged as a ratio to ORF-reg (issue 40.4):
    the preprocessing that scales the absolute MSEs is not stated."""
    rows = [r for r in report.numbers if r.entry.figure == "hrf-table1"]
    assert len(rows) == 10
    for r in rows:
        if r.entry.id.endswith("orf-reg"):
            assert r.verdict == NOT_COMPARABLE
        else:
            assert r.entry.ratio_to.endswith("orf-reg")
            assert "compared as a ratio to" in r.detail


def test_reading_of_needs_its_reading_and_plausible_its_setting() -> None:
    base = {"id": "hrf-x", "source": "s", "figure": "hrf-fig2", "value": 1.0,
            "match": {"experiment": "pointwise", "metric": "mse"}}  # fmt: skip
    with pytest.raises(ReferenceDataError, match="reading_of needs reading"):
        make_entry("number", {**base, "reading_of": "hrf-y"}, "hrf", "t.toml")
    with pytest.raises(ReferenceDataError, match="plausible goes with unstated"):
        make_entry("number", {**base, "plausible": [1, 2]}, "hrf", "t.toml")


def test_a_row_whose_se_dwarfs_the_papers_says_what_it_can_detect(report) -> None:  # type: ignore[no-untyped-def]
    by_id = {r.entry.id: r for r in report.numbers}
    chess = by_id["simrf-table2-chess-simrf"]  # our se 0.0005 vs the paper's 0.0001
    assert "detects differences ≥" in chess.detail
    close = by_id["simrf-table2-wifi-simrf"]  # comparable standard errors: nothing to say
    assert "detects differences" not in close.detail
