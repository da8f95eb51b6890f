"""Every run ends in a figure: ``rfbench <experiment>`` draws ``<out>.png`` and prints its path;
``--no-plot`` skips it, and a PNG rfbench did not draw is never replaced."""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from typer.testing import CliRunner

from rfbench.cli.app import app

ARGS = [
    "pointwise",
    "--r",
    "1.0",
    "--angles",
    "3",
    "--samples",
    "200",
    "--d",
    "8",
    "--projection-budget",
    "8",
]
ARGS += ["--estimators", "trig@iid,positive@iid", "--backend", "serial"]


def test_a_run_draws_its_figure(tmp_path: Path) -> None:
    out = tmp_path / "pw.parquet"
    done = CliRunner().invoke(app, [*ARGS, "--out", str(out)])
    assert done.exit_code == 0, done.output
    png = tmp_path / "pw.png"
    assert f"figure: {png}" in done.output
    with Image.open(png) as img:
        assert img.info.get("Software") == "rfbench" and img.size[0] > 500


def test_no_plot_and_a_foreign_png(tmp_path: Path) -> None:
    out = tmp_path / "pw.parquet"
    done = CliRunner().invoke(app, [*ARGS, "--out", str(out), "--no-plot"])
    assert done.exit_code == 0 and not (tmp_path / "pw.png").exists()
    mine = tmp_path / "pw.png"
    Image.new("RGB", (4, 4)).save(mine)
    blob = mine.read_bytes()
    done = CliRunner().invoke(app, [*ARGS, "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "figure not drawn" in done.output and mine.read_bytes() == blob
