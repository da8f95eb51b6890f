"""Runs refused before any job with exit 2 and one line (issue 32): the range probes of precision
and theory (rfbench.compute.runner.ranges), a loop count too large for any memory, a config nested
too deeply to parse."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app

RANGES = [
    (["precision", "--r", "1e308"], "a number whose square float64 holds"),
    (["precision", "--r", "30"], "'r': 30 is out of float64 range"),
    (["theory", "--hrf-r-max", "1e308"], "a number whose square float64 holds"),
    (["theory", "--hrf-r-max", "15"], "'hrf_r_max': 15 is out of float64 range"),
    (["theory", "--hrf-r-max", "30"], "'hrf_r_max': 30 is out of float64 range"),
    (["theory", "--hrf-r-points", "100000000"], "'hrf_r_points' = 100000000 is too large"),
    # SimRF Fig. 6's closed form overflows to NaN in a few hundred dimensions: was exit 1
    (["theory", "--ratio-d", "1000", "--curves", "simrf-fig6"], "'ratio_d': 1000 is out of"),
]


@pytest.mark.parametrize(("args", "message"), RANGES, ids=[" ".join(a) for a, _ in RANGES])
def test_out_of_range_runs_are_refused_before_any_job(tmp_path: Path, args, message) -> None:
    out = tmp_path / "x.parquet"
    done = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet", "--no-plot"])
    line = one_line_error(done, message)
    if "out of float64 range" in message:
        largest = float(line.rsplit("about ", 1)[1])
        assert 1 < largest < float(args[2])
    assert not out.exists() and not (tmp_path / ".rfbench-cache").exists()


def test_the_largest_value_that_runs_runs(tmp_path: Path) -> None:
    """The limit the refusal names is one that runs (to its 3 significant digits, rounded down)."""
    out = tmp_path / "x.parquet"
    args = ["theory", "--curves", "hrf-fig1", "--hrf-r-points", "5", "--hrf-theta-points", "5"]
    line = one_line_error(CliRunner().invoke(app, [*args, "--hrf-r-max", "15", "--out", str(out)]))
    largest = line.rsplit("about ", 1)[1]
    done = CliRunner().invoke(
        app, [*args, "--hrf-r-max", largest, "--out", str(out), "--quiet", "--no-plot"]
    )
    assert done.exit_code == 0, done.output


def _config(tmp_path: Path, params: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'experiment = "gram"\nname = "c"\n[params]\n{params}\n')
    return path


def test_a_loop_count_no_memory_holds_is_refused(tmp_path: Path) -> None:
    """reps = 10²⁰ (a TOML integer) used to spin for ever: the per-draw errors it keeps bound it."""
    config = _config(tmp_path, "reps = 100000000000000000000")
    done = CliRunner().invoke(app, ["run", str(config), "--out", str(tmp_path / "x.parquet")])
    one_line_error(done, "'reps' = 100000000000000000000 is too large; at most")


def test_a_config_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    for depth in (5000, 50):
        config = _config(tmp_path, "x = " + "[" * depth + "]" * depth)
        done = CliRunner().invoke(app, ["run", str(config), "--out", str(tmp_path / "x.parquet")])
        one_line_error(done, "c.toml: arrays or tables nested", "16 levels")


def test_a_scheduler_address_that_is_no_address(tmp_path: Path) -> None:
    """Was an internal ValueError from Dask's address parser (exit 1)."""
    pytest.importorskip("distributed")
    out = tmp_path / "x.parquet"
    args = ["pointwise", "--profile", "quick", "--backend", "dask", "--scheduler", "not a url"]
    done = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet", "--no-plot"])
    one_line_error(done, "invalid value for '--scheduler': 'not a url'", "tcp://127.0.0.1:8786")
    assert not out.exists()


@pytest.mark.parametrize("command", ["report", "compare"])
def test_an_output_file_that_is_a_folder(tmp_path: Path, command: str) -> None:
    """``report --out DIR`` and ``compare --markdown DIR`` (was an IsADirectoryError, exit 1)."""
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "mine.txt").write_text("kept")
    results = tmp_path / "res"
    results.mkdir()
    args = {
        "report": ["report", "--results", str(results), "--out", str(folder)],
        "compare": ["compare", str(results), str(results), "--markdown", str(folder)],
    }[command]
    one_line_error(CliRunner().invoke(app, args), str(folder), "folder")
    assert [p.name for p in folder.iterdir()] == ["mine.txt"]


def test_figures_of_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    """Was exit 0 with '0 of 26 figures drawn' (report and site already said so)."""
    done = CliRunner().invoke(app, ["figures", "--results", str(tmp_path / "nothere")])
    one_line_error(done, f"results folder '{tmp_path / 'nothere'}' does not exist")
