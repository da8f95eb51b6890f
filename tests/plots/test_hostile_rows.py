"""Odd rows still give their paper figure, never an internal error that stops every other one:
infinite values (an estimator that overflowed) are left out and said so, and a name that looks
like mathtext but does not parse is drawn as written."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from rfbench.cli.app import app

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _copy(tmp_path: Path) -> tuple[Path, pa.Table]:
    """cse-fig1's committed result file in a results folder of its own, and its table (with the
    provenance: rewritten, it is an rfbench result file still)."""
    path = tmp_path / "results" / "pointwise" / "cse-fig1.parquet"
    path.parent.mkdir(parents=True)
    shutil.copyfile(RESULTS / "pointwise" / "cse-fig1.parquet", path)
    return path, pq.read_table(path)


def _figures(tmp_path: Path):
    out = tmp_path / "figures"
    args = ["figures", "--results", str(tmp_path / "results"), "--out", str(out)]
    return CliRunner().invoke(app, [*args, "--only", "cse-fig1", "--strict"]), out


def test_infinite_values_are_left_out_of_a_figure(tmp_path: Path) -> None:
    path, table = _copy(tmp_path)
    value = table["value"].to_numpy().copy()
    value[::5], value[1::7] = np.inf, -np.inf
    bad = int(np.isinf(value).sum())
    i = table.schema.get_field_index("value")
    pq.write_table(table.set_column(i, "value", pa.array(value)), path)
    done, out = _figures(tmp_path)
    assert done.exit_code == 0, done.output
    assert f"{bad} row(s) of infinite value left out" in " ".join(done.output.split())
    assert (out / "cse-fig1.png").stat().st_size > 10_000


def test_a_name_that_is_broken_mathtext_is_drawn_as_written(tmp_path: Path) -> None:
    path, table = _copy(tmp_path)
    names = table["estimator"].to_pylist()
    i = table.schema.get_field_index("estimator")
    broken = [r"$\sqrt{$" if n == "trig@iid" else n for n in names]
    pq.write_table(table.set_column(i, "estimator", pa.array(broken)), path)
    done, out = _figures(tmp_path)
    assert done.exit_code == 0, done.output
    assert (out / "cse-fig1.png").stat().st_size > 10_000


def test_a_figure_that_raises_leaves_the_others_drawn(tmp_path: Path, monkeypatch) -> None:
    """A bug in one figure stopped every figure after it; now they are drawn, then the command
    fails with exit status 1 naming the figure and a log file."""
    import dataclasses

    from rfbench.present.plots.registry import FIGURES, list_figures

    list_figures()
    path, _ = _copy(tmp_path)
    shutil.copyfile(RESULTS / "pointwise" / "cse-fig2.parquet", path.with_name("cse-fig2.parquet"))

    def broken(frames):
        raise ZeroDivisionError("a bug")

    monkeypatch.setitem(FIGURES, "cse-fig1", dataclasses.replace(FIGURES["cse-fig1"], draw=broken))
    monkeypatch.setenv("RFBENCH_LOG_DIR", str(tmp_path / "logs"))
    out = tmp_path / "figures"
    args = ["figures", "--results", str(tmp_path / "results"), "--out", str(out)]
    done = CliRunner().invoke(app, [*args, "--only", "cse-fig1,cse-fig2"])
    assert done.exit_code == 1, done.output
    assert "figure cse-fig1 could not be drawn: ZeroDivisionError: a bug" in done.output
    assert "traceback in" in done.output and (out / "cse-fig2.png").is_file()


def _hrf_fig1(tmp_path: Path, keep) -> tuple:
    """hrf-fig1's committed closed forms cut to the rows ``keep`` selects, drawn alone."""
    path = tmp_path / "results" / "theory" / "hrf-fig1.parquet"
    path.parent.mkdir(parents=True)
    table = pq.read_table(RESULTS / "theory" / "hrf-fig1.parquet")
    rows = table.to_pandas()
    cut = pa.Table.from_pandas(rows[keep(rows)], preserve_index=False)
    pq.write_table(cut.replace_schema_metadata(table.schema.metadata), path)
    out = tmp_path / "figures"
    args = ["figures", "--results", str(tmp_path / "results"), "--out", str(out)]
    return CliRunner().invoke(app, [*args, "--only", "hrf-fig1"]), out


def test_hrf_fig1_of_one_line_of_points_is_drawn(tmp_path: Path) -> None:
    """Two closed-form values at one r: no contour can be drawn through a line (it raised)."""
    done, out = _hrf_fig1(
        tmp_path, lambda df: (df["metric"] == "theory_mse") & (df["value"] > 1) & (df["r"] == 1.3)
    )
    assert done.exit_code == 0, done.output
    assert (out / "hrf-fig1.png").is_file()


def test_hrf_fig1_of_mse_zero_only_says_it_has_no_data(tmp_path: Path) -> None:
    """Every MSE 0 (exact at θ = 0): a log scale shows nothing; it raised on log10(0)."""
    done, out = _hrf_fig1(tmp_path, lambda df: (df["metric"] == "theory_mse") & (df["value"] == 0))
    assert done.exit_code == 0, done.output
    assert "the figure has no data" in done.output and not (out / "hrf-fig1.png").exists()
