"""Measured reasons are filled in from the results (issue 16): a number a reason quotes changes
when the result file changes; templates are validated."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import rfbench.compute.experiments.qmc  # noqa: F401  (registers the metric mse_std)
from rfbench.compute.results import load_provenance, load_results, write_results
from rfbench.present import reference
from rfbench.present.report import build_report
from rfbench.present.report.build import fill_text
from rfbench.present.report.render import render_markdown

RESULTS = Path(__file__).resolve().parents[2] / "results"
TABLE1 = RESULTS / "qmc" / "hrf-table1.parquet"


def _reason(folder: Path, key: str) -> str:
    return next(r.text for r in build_report(folder).reasons if r.key == key)


@pytest.mark.skipif(not TABLE1.is_file(), reason="no committed HRF Table 1 results")
def test_changing_a_result_changes_the_reason_that_quotes_it(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    (folder / "qmc").mkdir(parents=True)
    shutil.copy(TABLE1, folder / "qmc" / TABLE1.name)
    before = _reason(folder, "hrf-reason-3")
    assert "Halton-R/ORF-reg = " in before and "n/a" not in before
    rows = load_results(TABLE1)
    mask = (
        (rows["estimator"] == "trig@halton")
        & (rows["dataset"] == "wine")
        & (rows["metric"] == "mse")
    )
    assert mask.sum() == 1
    orf = rows[
        (rows["estimator"] == "trig@orf") & (rows["dataset"] == "wine") & (rows["metric"] == "mse")
    ]["value"].iloc[0]
    rows.loc[mask, "value"] = 2.5 * orf  # Halton-R now 2.5 × ORF-reg on wine
    path = folder / "qmc" / TABLE1.name
    path.unlink()
    write_results(rows, path, load_provenance(TABLE1))
    after = _reason(folder, "hrf-reason-3")
    assert after != before
    assert "Halton-R/ORF-reg = 2.50 (wine)" in after


def test_a_missing_value_leaves_the_reason_not_measured_never_stale(tmp_path: Path) -> None:
    """Without HRF Table 1 rows the reason quoting them is not measured: the report names the
    figure it needs and prints neither a stale number nor a placeholder."""
    (tmp_path / "results").mkdir()
    report = build_report(tmp_path / "results")
    reason = next(r for r in report.reasons if r.key == "hrf-reason-3")
    assert not reason.measured and reason.missing == ("hrf-table1",)
    assert "1.03" not in reason.text
    text = render_markdown(report, tmp_path / "results" / "REPORT.md", tmp_path / "figures")
    assert "Not measured here: these results lack rows of hrf-table1 that it reads." in text
    assert "Halton-R/ORF-reg =" not in text and "n/a" not in text


def test_every_placeholder_is_declared_and_every_value_quoted() -> None:
    for r in reference.reasons():
        names = {v.name for v in r.values}
        filled = fill_text(r.text, dict.fromkeys(names, 1.0))
        assert "{" not in filled, r.key


def test_abalone_cause_is_not_established() -> None:
    r = reference.reason_of("simrf-table2-abalone-simrf")
    assert r is not None and not r.established
    assert "not established" in r.text
