"""Every run ends in a figure: ``rfbench <experiment>`` draws ``<out>.png`` and prints its path;
``--no-plot`` skips it, and a PNG rfbench did not draw is never replaced."""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from typer.testing import CliRunner

from rfbench.cli import app

ARGS = ["pointwise", "--r", "1.0", "--angles", "3", "--samples", "200", "--d", "8", "--m", "8"]
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


def test_round_off_values_do_not_set_a_log_axis() -> None:
    """An estimator exact at a point gives 1e-16 there; the axis shows the informative range."""
    import matplotlib.pyplot as plt

    from rfbench.plots.generic import _clip_round_off

    fig, ax = plt.subplots()
    values = [2e-16, 0.01, 0.5, 1.0, 3.0]
    ax.plot(range(5), values)
    ax.set_yscale("log")
    _clip_round_off(ax, values)
    low = ax.get_ylim()[0]
    assert 1e-3 < low < 0.01 and any("round-off" in t.get_text() for t in ax.texts)
    plt.close(fig)
