"""A FIFO in a results folder never hangs a reader (issue 44 item 4): ``site`` refuses it in one
line (exit 2), ``report`` lists it as unreadable and goes on, ``load_results`` refuses it before
opening it. Each command runs in a subprocess with a timeout, so a regression fails, not hangs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rfbench.compute.results import UnreadableResultError, load_provenance, load_results

REPO = Path(__file__).resolve().parents[2]
SMALL = REPO / "results" / "theory" / "simrf-fig4.parquet"
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def _folder(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    (results / "theory").mkdir(parents=True)
    shutil.copy(SMALL, results / "theory" / SMALL.name)
    os.mkfifo(results / "theory" / "stuck.parquet")
    return results


def _rfbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    code = "import sys; from rfbench.entry import main; sys.argv[0] = 'rfbench'; main()"
    try:
        return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"rfbench {' '.join(args)} hung on a FIFO in the results folder")


def test_load_results_refuses_a_fifo_before_opening_it(tmp_path: Path) -> None:
    fifo = _folder(tmp_path) / "theory" / "stuck.parquet"
    for read in (load_results, load_provenance):
        with pytest.raises(UnreadableResultError, match="not a regular file"):
            read(fifo)


def test_site_refuses_a_fifo_in_one_line(tmp_path: Path) -> None:
    results = _folder(tmp_path)
    done = _rfbench("site", "--results", str(results), "--out", str(tmp_path / "site"),
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "stuck.parquet" in done.stderr and "not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


def test_report_lists_a_fifo_and_goes_on(tmp_path: Path) -> None:
    results = _folder(tmp_path)
    out = tmp_path / "REPORT.md"
    done = _rfbench("report", "--results", str(results), "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "not a regular file" in out.read_text()
