"""The report of the committed results, built once per test process and shared read-only.

Building it reads every committed result file and evaluates every reference entry (seconds each
time); the tests of its verdicts, readings, reasons, links and layout only read it, so each test
process builds it once (at most two builds under ``make test``'s two xdist workers).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rfbench.present.report import Report, build_report
from rfbench.present.report.render import render_markdown, render_tables

COMMITTED = Path(__file__).resolve().parents[2] / "results"


@pytest.fixture(scope="session")
def committed_report() -> Report:
    """``build_report`` of the committed results/ (skips in a checkout without them)."""
    if not (COMMITTED / "pointwise").is_dir():
        pytest.skip("no committed results")
    return build_report(COMMITTED)


@pytest.fixture(scope="session")
def committed_markdown(committed_report: Report) -> tuple[str, str]:
    """The committed results' REPORT.md and its companion tables, rendered afresh (figures linked
    from results/figures, as ``rfbench report`` does)."""
    text = render_markdown(committed_report, COMMITTED / "REPORT.md", COMMITTED / "figures")
    return text, render_tables(committed_report)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that read the committed report are slow (building it reads every committed
    result and evaluates every reference entry: about half a minute, a minute on a loaded
    machine): ``make test-fast`` leaves them to ``make test``."""
    for item in items:
        if {"committed_report", "committed_markdown"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
