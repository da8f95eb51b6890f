"""Where a run cannot write is the user's to fix: exit status 2, one line naming the file.

An output in a folder nothing can be created in (``/proc``), a full disk or file-size limit
(pyarrow's error names no file: rfbench does), a file where the job cache folder belongs, a folder
where a job file belongs, and a symbolic link as the cache folder (refused: rfbench never writes
through links, as for the output itself).
"""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import one_line_error
from counted_experiment import Counted  # noqa: F401 - registers preflight-counted
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.runner.cache import CACHE_DIRNAME, cache_dir
from rfbench.compute.runner.digest import code_tag


def _run(out: Path, *extra: str):
    args = ["preflight-counted", "--out", str(out), "--backend", "serial", "--quiet", "--no-plot"]
    return CliRunner().invoke(app, [*args, *extra])


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_an_output_where_no_file_can_be_made(tmp_path: Path) -> None:
    one_line_error(_run(Path("/proc/x.parquet")), "cannot write output /proc/x.parquet", "--out")


@pytest.mark.parametrize(
    ("code", "reason"), [(errno.ENOSPC, "No space left on device"), (errno.EFBIG, "File too large")]
)
def test_a_full_disk_or_size_limit_names_the_file(tmp_path: Path, monkeypatch, code, reason):
    import pyarrow.parquet as pq

    def full(table, where, *args, **kwargs):
        raise OSError(code, f"Error writing bytes to file. Detail: [errno {code}] {reason}")

    monkeypatch.setattr(pq, "write_table", full)
    out = tmp_path / "res" / "c.parquet"
    line = one_line_error(_run(out), "cannot write", reason)
    assert str(cache_dir(out) / code_tag()) in line


@pytest.mark.slow  # a real process under ulimit -f
def test_a_real_file_size_limit_is_a_user_error(tmp_path: Path) -> None:
    """``ulimit -f``: the write fails with EFBIG (Python ignores SIGXFSZ)."""
    out = tmp_path / "res" / "c.parquet"
    code = "import counted_experiment; from rfbench.entry import main; main()"
    args = ["preflight-counted", "--out", str(out), "--backend", "serial", "--quiet", "--no-plot"]
    path = os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])
    # no bytecode written under the limit: a first import would leave a truncated .pyc in the
    # source tree (a fresh clone's rfbench/__pycache__/entry.*.pyc of 1,024 bytes), and every later
    # process importing it fails with "marshal data too short"
    env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    done = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, preexec_fn=limit)  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("rfbench: error: cannot write ") and "File too large" in line
    assert "ulimit -f" in line and str(tmp_path / "res") in line


def test_a_file_where_the_cache_folder_belongs(tmp_path: Path) -> None:
    out = tmp_path / "res" / "c.parquet"
    out.parent.mkdir()
    (out.parent / CACHE_DIRNAME).write_text("mine")
    one_line_error(_run(out), f"{out.parent / CACHE_DIRNAME} is a file", "move it away")
    assert (out.parent / CACHE_DIRNAME).read_text() == "mine" and not out.exists()


def test_a_folder_where_a_job_file_belongs(tmp_path: Path) -> None:
    out = tmp_path / "res" / "c.parquet"
    assert _run(out).exit_code == 0
    job = sorted((cache_dir(out) / code_tag()).glob("*.parquet"))[0]
    job.unlink()
    (job / "inside").mkdir(parents=True)
    for extra in ((), ("--force",)):
        one_line_error(_run(out, *extra), f"{job} is a folder where a job file belongs")
    assert (job / "inside").is_dir()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_where_a_job_file_belongs_is_called_a_fifo(tmp_path: Path) -> None:
    """Issue 44 item 6: named for what it is (it was called "a folder"), and left alone."""
    out = tmp_path / "res" / "c.parquet"
    assert _run(out).exit_code == 0
    job = sorted((cache_dir(out) / code_tag()).glob("*.parquet"))[0]
    job.unlink()
    os.mkfifo(job)
    one_line_error(_run(out), f"{job} is a FIFO (named pipe) where a job file belongs")
    assert job.is_fifo()


def test_a_symlinked_cache_folder_is_not_written_through(tmp_path: Path) -> None:
    out = tmp_path / "res" / "c.parquet"
    out.parent.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out.parent / CACHE_DIRNAME).symlink_to(elsewhere, target_is_directory=True)
    one_line_error(_run(out), f"{out.parent / CACHE_DIRNAME} is a symbolic link")
    assert not any(elsewhere.iterdir()) and not out.exists()


def test_a_full_disk_while_drawing_the_figure_names_it(tmp_path: Path, monkeypatch) -> None:
    def full(path):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("rfbench.present.plots.generic.draw_result", full)
    out = tmp_path / "c.parquet"
    done = CliRunner().invoke(app, ["preflight-counted", "--out", str(out), "--backend", "serial",
                                    "--quiet"])  # fmt: skip
    # the results are written: a figure that cannot be written is a warning, not a failed run
    assert done.exit_code == 0 and out.exists(), done.output
    assert done.output.startswith("rfbench: warning: figure ")
    assert f"cannot write {out.with_suffix('.png')}: No space left on device" in done.output


def test_a_figure_that_fails_to_draw_keeps_the_results_and_exits_0(tmp_path: Path, monkeypatch):
    """Issue 39: a plotting bug after a finished run is one warning line naming the figure (and
    a log of its traceback), never exit 1: the results are written."""

    def broken(path):
        raise ValueError("Data cannot be log-scaled because all values are <= 0.")

    monkeypatch.setattr("rfbench.present.plots.generic.draw_result", broken)
    monkeypatch.setenv("RFBENCH_LOG_DIR", str(tmp_path / "log"))
    out = tmp_path / "c.parquet"
    done = CliRunner().invoke(app, ["preflight-counted", "--out", str(out), "--backend", "serial",
                                    "--quiet"])  # fmt: skip
    assert done.exit_code == 0, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rfbench: warning: figure ")
    assert str(out.with_suffix(".png")) in lines[0] and "log-scaled" in lines[0]
    assert out.exists() and not out.with_suffix(".png").exists()
    assert len(list((tmp_path / "log").glob("*.log"))) == 1
