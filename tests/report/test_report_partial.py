"""The report of a partial run (issue 31): it says which figures ran and which did not, with the
command that produces each missing one, and prints no placeholder, empty list or broken number;
the committed full report renders unchanged."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from rfbench.compute.skipped import record_skipped
from rfbench.present.report import build_report, write_report
from rfbench.present.report.render import (
    _number_section,
    checked_figures,
    config_of,
    render_markdown,
)
from rfbench.present.report.verdicts import DIFFERS

ROOT = Path(__file__).resolve().parents[2]
FIG7 = ROOT / "results" / "gram" / "simrf-fig7.parquet"
#: what a partial report must never print: a placeholder, an empty list, a number glued to text
BROKEN = [r"n/a", r"numbers: ;", r": ;", r"\)e-\d", r"\?e-\d", r"\(have: none\)", r"= \? "]


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


@pytest.mark.skipif(not FIG7.is_file(), reason="no committed SimRF Fig. 7 results")
def test_a_partial_report_says_what_ran_and_what_did_not(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    (folder / "gram").mkdir(parents=True)
    shutil.copy(FIG7, folder / "gram" / FIG7.name)
    skipped = {"config": "configs/simrf/table2.toml", "name": "simrf-table2",
               "dataset": "abalone", "fix": "rfbench data fetch abalone"}  # fmt: skip
    record_skipped(folder, [skipped])
    path, report = write_report(folder)
    text = path.read_text(encoding="utf-8")
    tables = (folder / "REPORT-tables.md").read_text(encoding="utf-8")
    for pattern in BROKEN:
        assert not re.search(pattern, text + tables), pattern
    missing = _section(text, "## Not in these results")
    assert f"1 of the {len(checked_figures(report))} figures and tables" in missing
    assert "(simrf-fig7)" in missing
    assert ("- `simrf-table2`: `rfbench run configs/simrf/table2.toml` (skipped: abalone is not "
            "here; get it with `rfbench data fetch abalone`)") in missing  # fmt: skip
    listed = re.findall(r"^- `([a-z0-9-]+)`: `rfbench run (\S+)`", missing, flags=re.M)
    assert len(listed) == len(checked_figures(report)) - 1
    for figure, config in listed:
        assert (ROOT / config).is_file(), (figure, config)
    # no Finding about a data set that never ran; no table of a figure that never ran
    assert "abalone" not in text.split("## Summary")[0].split("## Not in these results")[0]
    assert "#### simrf-table2:" not in text and "#### hrf-table1:" not in text
    assert "**Family-wise**: no number was compared with a standard error." in text


def test_every_checked_figure_has_its_config(committed_report) -> None:  # type: ignore[no-untyped-def]
    """``config_of`` names a file that exists for every figure the report can check."""
    for figure in checked_figures(committed_report):
        assert (ROOT / config_of(figure)).is_file(), figure


def test_a_long_table_shown_whole_has_no_empty_count(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    report = build_report(tmp_path / "r")
    rows = [dataclasses.replace(r, verdict=DIFFERS) for r in report.numbers
            if r.entry.figure == "hrf-table1"]  # fmt: skip
    assert len(rows) > 8
    lines = _number_section(rows, "hrf-table1", full=False)
    count = next(line for line in lines if line.startswith(f"{len(rows)} numbers"))
    assert count.startswith(f"{len(rows)} numbers, all below (every row:"), count


def test_the_committed_report_renders_unchanged(committed_report) -> None:  # type: ignore[no-untyped-def]
    """``rfbench report --results results`` reproduces results/REPORT.md byte for byte."""
    committed = ROOT / "results" / "REPORT.md"
    text = render_markdown(committed_report, committed, committed.parent / "figures")
    assert text == committed.read_text(encoding="utf-8")
