"""A result file too large for the memory budget is refused from its footer, before any row is
read, by every command that reads result files: figures, site and compare stop (exit 2, one
line); report, which reports on the files it can read, skips it with the same line as a warning,
as it does an unreadable file."""

from __future__ import annotations

import pytest
from compare_helpers import one_line, rows, write

import rfbench.compute.memlimits
from rfbench.cli.app import cli


@pytest.mark.parametrize("command", ["report", "figures", "site", "compare"])
def test_a_result_file_beyond_the_budget_is_refused_before_it_is_read(
    tmp_path, capsys, monkeypatch, command
) -> None:
    """2,000 rows × 9 columns at 200 B per cell is 3.4 MiB, twice the 1.7 MiB budget that half of
    3.4 MiB of available memory leaves."""
    path = write(tmp_path / "res", rows(2000))
    monkeypatch.setattr(
        rfbench.compute.memlimits, "available_memory", lambda: 2 * 2000 * 9 * 200 // 2
    )
    args = {"compare": ["compare", str(tmp_path / "res"), str(tmp_path / "res")]}.get(
        command, [command, "--results", str(tmp_path / "res")]
    )
    if command == "site":
        args += ["--out", str(tmp_path / "site")]
    needles = (f"result file {path} has 2,000 rows of 9 columns", "more than the 1.72 MiB budget")
    if command == "report":
        assert cli(args) == 0
        err = capsys.readouterr().err
        assert err.startswith("rfbench: warning: unreadable result file") and err.count("\n") == 1
        assert all(needle in err for needle in needles), err
    else:
        assert cli(args) == 2
        one_line(capsys, *needles)
