"""Figures of the theory, gram and clusters experiments, drawn from quick-profile results.

Per figure: PNG and PDF written and non-empty, the expected panels, and the plotted curves carry
the numbers of the parquet file (so a figure that drops, mislabels or rescales a curve fails).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from figure_helpers import draw as _draw
from figure_helpers import frame as _frame
from matplotlib.collections import QuadMesh
from matplotlib.image import AxesImage

from rfbench.compute.runner import RunOptions, load_config, run
from rfbench.present.plots.draw import draw_figure
from rfbench.present.plots.registry import FIGURES, list_figures
from rfbench.present.plots.theory import MSE_FLOOR

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = {
    "hrf-fig1": "hrf/fig1",
    "simrf-fig4": "simrf/fig4",
    "simrf-fig5": "simrf/fig5",
    "simrf-fig6": "simrf/fig6",
    "simrf-fig7": "simrf/fig7",
    "spectraformer-grid": "spectraformer/grid",
    "hrf-fig6": "hrf/fig6",
}


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Quick-profile results of every config behind these figures."""
    out = tmp_path_factory.mktemp("results")
    for figure_id, path in CONFIGS.items():
        config = load_config(ROOT / "configs" / f"{path}.toml", "quick")
        target = out / config["experiment"] / f"{figure_id}.parquet"
        run(config["experiment"], config, RunOptions(out=target, backend="serial", quiet=True))
    return out


def _labels(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


@pytest.mark.slow
@pytest.mark.parametrize("figure_id", list(CONFIGS))
def test_files_written(results_dir: Path, tmp_path: Path, figure_id: str) -> None:
    list_figures()
    outcome = draw_figure(FIGURES[figure_id], results_dir, tmp_path)
    assert outcome.problem == ""
    assert sorted(p.suffix for p in outcome.paths) == [".pdf", ".png"]
    for path in outcome.paths:
        assert path.exists() and path.stat().st_size > 5_000, path


@pytest.mark.slow
def test_hrf_fig1(results_dir: Path) -> None:
    fig = _draw(results_dir, "hrf-fig1")
    assert len(fig.axes) == 5  # three maps, the colour bar, the slice
    maps = fig.axes[:3]
    assert all(any(isinstance(c, QuadMesh) for c in ax.collections) for ax in maps)
    assert fig.axes[3].get_xscale() == "log"  # the colour bar: log colour scale
    df = _frame(results_dir, "hrf-fig1")
    mse = df[df["metric"] == "theory_mse"]
    r_grid = np.sort(mse["r"].unique())
    assert maps[0].get_ylim()[0] <= -r_grid.max() + 1e-9  # r mirrored to [-r_max, r_max]
    slice_ax = fig.axes[-1]
    assert slice_ax.get_yscale() == "log" and len(slice_ax.get_lines()) == 3
    r1 = r_grid[np.abs(r_grid - 1.0).argmin()]
    for line, name in zip(slice_ax.get_lines(), mse["estimator"].unique(), strict=True):
        want = mse[(mse["estimator"] == name) & (mse["r"] == r1)].sort_values("theta")["value"]
        np.testing.assert_allclose(line.get_ydata(), np.clip(want, MSE_FLOOR, None), rtol=1e-12)
    # only the hybrid is ~0 at both ends of the slice (HRF Fig. 1's point)
    ends = {
        name: line.get_ydata()[[0, -1]]
        for name, line in zip(mse["estimator"].unique(), slice_ax.get_lines(), strict=True)
    }
    assert np.all(ends["angular-hybrid@iid"] == MSE_FLOOR)
    assert sum(np.all(v == MSE_FLOOR) for v in ends.values()) == 1


@pytest.mark.slow
def test_simrf_fig4(results_dir: Path) -> None:
    fig = _draw(results_dir, "simrf-fig4")
    top, zoom, key = fig.axes
    df = _frame(results_dir, "simrf-fig4")
    conf = df[df["metric"] == "rf_conformity"]
    plus = conf[conf["weights"] == "simrf-plus"].sort_values("passes")
    # 4 flat couplings + SimRF+ + 3 closed forms
    assert len(top.get_lines()) == 8
    line = next(ln for ln in top.get_lines() if ln.get_marker() == "v")
    np.testing.assert_allclose(line.get_ydata(), plus["value"])
    np.testing.assert_allclose(line.get_xdata(), plus["passes"].astype(float))
    assert len(top.collections) == 1  # the IIDRF ±1 sd band
    labels = _labels(key)
    for name in ("IIDRFs", "ORFs", "SimRFs", "SimRFs+", "numerically optimised"):
        assert name in labels
    lo, hi = zoom.get_ylim()
    simrf_like = conf[conf["weights"].isin(["simrf", "simrf-plus", "optimum"])]["value"]
    assert lo < simrf_like.min() and simrf_like.max() < hi
    assert not lo < conf[conf["weights"] == "iid"]["value"].iloc[0] < hi  # a zoom indeed


def test_simrf_fig5(results_dir: Path) -> None:
    fig = _draw(results_dir, "simrf-fig5")
    ax, twin = fig.axes
    assert len(ax.get_lines()) == 3 and len(twin.get_lines()) == 1
    assert twin.get_yscale() == "log"
    df = _frame(results_dir, "simrf-fig5")
    dens = df[df["metric"] == "density"]
    iid = dens[dens["weights"] == "iid"].sort_values("w")
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), iid["value"])
    # E f in the legend is the closed-form E rho per pair: SimRF < ORF < IID (SimRF Fig. 5)
    labels = _labels(twin)
    means = [float(t.split("E f = ")[1].rstrip(")")) for t in labels if "E f = " in t]
    assert len(means) == 3 and means[2] < means[1] < means[0]


def test_simrf_fig6(results_dir: Path) -> None:
    fig = _draw(results_dir, "simrf-fig6")
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    df = _frame(results_dir, "simrf-fig6")
    simrf = df[(df["weights"] == "simrf") & (df["v"] > 0)].sort_values("v")
    curves = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 1]
    assert len(curves) == 3
    np.testing.assert_allclose(curves[2].get_ydata(), simrf["value"])
    limits = sorted(float(t.get_text().split(": ")[1]) for t in ax.texts)
    # SimRF v -> 0 (docs/experiments.md#simrf-fig6)
    assert limits[0] == pytest.approx(0.0077818, abs=2e-6)
    assert limits[-1] == pytest.approx(1.0)  # ORF v -> 0


def test_simrf_fig7(results_dir: Path) -> None:
    fig = _draw(results_dir, "simrf-fig7")
    top, low = fig.axes
    assert top.get_yscale() == "log"
    df = _frame(results_dir, "simrf-fig7")
    names = list(dict.fromkeys(df["estimator"]))
    with_theory = df[df["metric"] == "theory_frob_sq_per_entry"]["estimator"].nunique()
    assert len(top.collections) == len(names)  # one ±1 s.e. band each
    assert len(top.get_lines()) == len(names) + with_theory + 1  # + the legend's dashed key
    assert len(low.containers) == with_theory  # ratio error bars
    iid = df[(df["estimator"] == "positive@iid") & (df["metric"] == "frob_sq_per_entry")]
    np.testing.assert_allclose(top.get_lines()[0].get_ydata(), iid.sort_values("m")["value"])
    np.testing.assert_allclose(top.get_lines()[0].get_xdata(), np.sort(iid["m"] / iid["d"]))


def test_spectraformer_grid(results_dir: Path) -> None:
    fig = _draw(results_dir, "spectraformer-grid")
    df = _frame(results_dir, "spectraformer-grid")
    radii = df["r"].nunique()
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 3 * radii and len(fig.axes) == len(panels) + 1
    weights = df["estimator"].str.split("@").str[1].nunique()
    for ax in panels:
        assert isinstance(ax.images[0], AxesImage)
        assert ax.images[0].get_array().shape[0] == weights  # a row per weights sampler
    assert [t.get_text() for t in panels[0].get_yticklabels()][0] == "iid"
    skipped = df[df["metric"] == "skipped"]
    per_panel = skipped[skipped["kernel"] == "softmax"]["estimator"].nunique()
    assert per_panel > 0  # the sign component cannot estimate softmax/Gaussian kernels
    assert len(panels[0].patches) == per_panel  # hatched cells
    note = fig.axes[-1].texts[0].get_text()
    assert "[1] sign@" in note and "angular" in note
    assert "Error" not in note  # a reason in words, not the exception's name (issue 39)
    title = fig._suptitle.get_text()
    assert max(len(line) for line in title.splitlines()) < 100  # not clipped at a page's width
    # a cell's annotation is its value
    cell = df[(df["metric"] == "rel_frob") & (df["kernel"] == "softmax")].iloc[0]
    shown = {t.get_text() for t in panels[0].texts}
    assert f"{cell['value']:.2g}".removeprefix("0") in shown


def test_hrf_fig6(results_dir: Path) -> None:
    fig = _draw(results_dir, "hrf-fig6")
    df = _frame(results_dir, "hrf-fig6")
    protocols, datasets = df["protocol"].dropna().nunique(), df["dataset"].nunique()
    panels = fig.axes[1:]
    assert len(panels) == protocols * datasets
    estimators = df[df["metric"] == "mse_mean"]["estimator"].nunique()
    for ax in panels:
        assert ax.get_yscale() == "log"
        assert len(ax.get_lines()) == 2 * estimators  # mean + closed form
        assert len(ax.collections) == estimators  # min-max bands
    mean = df[(df["metric"] == "mse_mean") & (df["protocol"] == "paper")]
    first = mean[mean["estimator"] == "cluster-hybrid"].sort_values("m")["value"]
    np.testing.assert_allclose(panels[0].get_lines()[0].get_ydata(), first)
    labels = _labels(fig.axes[0])
    assert {"Hybrid-Cluster", "FAVOR+ (= SM⁺)", "Trig"} <= set(labels)
