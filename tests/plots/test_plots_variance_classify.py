"""Figures of the variance and classify experiments, drawn from quick-profile results.

Per figure: PNG and PDF written and non-empty, the expected panels, and the plotted curves carry
the numbers of the parquet file (so a figure that drops, mislabels or rescales a curve fails; e.g.
DERF Fig. 3's x-axis counts features, which for trig@* is twice the ``m`` column).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from figure_helpers import draw as _draw
from figure_helpers import frame as _frame
from matplotlib.container import ErrorbarContainer
from matplotlib.text import Annotation

from rfbench.compute.runner import RunOptions, load_config, run
from rfbench.present.plots.draw import draw_figure
from rfbench.present.plots.registry import FIGURES, list_figures

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = {
    "derf-fig1": "derf/fig1",
    "derf-fig2": "derf/fig2",
    "derf-fig3": "derf/fig3",
    "simrf-fig8": "simrf/fig8",
    "simrf-fig10": "simrf/fig10",
}


def _run(figure_id: str, out: Path) -> None:
    config = load_config(ROOT / "configs" / f"{CONFIGS[figure_id]}.toml", "quick")
    target = out / config["experiment"] / f"{figure_id}.parquet"
    run(config["experiment"], config, RunOptions(out=target, backend="serial", quiet=True))


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """Quick-profile results of every config behind these figures (data from RFBENCH_DATA)."""
    out = tmp_path_factory.mktemp("results")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RFBENCH_DATA", str(data_dir))
        for figure_id in CONFIGS:
            _run(figure_id, out)
    return out


def _curves(ax) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Label -> (x, y) of the labelled plain lines and errorbar curves of a panel."""
    out = {}
    for line in ax.get_lines():
        if not line.get_label().startswith("_"):
            out[line.get_label()] = (np.asarray(line.get_xdata(), float),
                                     np.asarray(line.get_ydata(), float))  # fmt: skip
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer) and not c.get_label().startswith("_"):
            data = c.lines[0]
            out[c.get_label()] = (np.asarray(data.get_xdata(), float),
                                  np.asarray(data.get_ydata(), float))  # fmt: skip
    return out


def _errorbars(ax) -> list[ErrorbarContainer]:
    return [c for c in ax.containers if isinstance(c, ErrorbarContainer)]


@pytest.mark.slow
@pytest.mark.parametrize("figure_id", list(CONFIGS))
def test_files_written(results_dir: Path, tmp_path: Path, figure_id: str) -> None:
    list_figures()
    outcome = draw_figure(FIGURES[figure_id], results_dir, tmp_path)
    assert outcome.problem == ""
    names = sorted(p.name for p in outcome.paths)
    assert names == [f"{figure_id}.pdf", f"{figure_id}.png"]
    assert all(p.stat().st_size > 10_000 for p in outcome.paths)


# ------------------------------------------------------------------ DERF Figs. 1-2


@pytest.mark.slow
def test_derf_fig2_panels_curves_and_mc(results_dir: Path) -> None:
    df = _frame(results_dir, "derf-fig2")
    fig = _draw(results_dir, "derf-fig2")
    assert len(fig.axes) == 6  # the six regimes of the paper
    main = df[df["metric"] == "log_rel_var"]
    for ax, regime in zip(fig.axes, ["normal", "sphere", "heterogen", "mnist", "cifar10",
                                     "mnist/cifar10"], strict=True):  # fmt: skip
        assert regime in ax.get_title()
        curves = _curves(ax)
        assert {"TrigRF", "PosRF", "GERF", "ADERF", "SDERF", "SADERF (not in paper)"} <= set(curves)
        rows = main[(main["regime"] == regime) & (main["mechanism"] == "sderf")].sort_values(
            "sigma"
        )
        x, y = curves["SDERF"]
        np.testing.assert_allclose(x, rows["sigma"])
        np.testing.assert_allclose(y, rows["value"])
        # one MC marker (with its s.e. bar) per mechanism, at the MC value
        bars = _errorbars(ax)
        assert len(bars) == 6
        mc = df[(df["regime"] == regime) & (df["metric"] == "log_rel_var_mc")]
        got = np.sort(np.concatenate([np.asarray(b.lines[0].get_ydata(), float) for b in bars]))
        np.testing.assert_allclose(got, np.sort(mc["value"].to_numpy(float)))
        # the title's MC check is the largest |MC − closed form| / s.e. on the same pairs
        th = df[(df["regime"] == regime) & (df["metric"] == "log_rel_var_mc_theory")]
        z = (mc.set_index("mechanism")["value"] - th.set_index("mechanism")["value"]).abs()
        z = (z / mc.set_index("mechanism")["stderr"]).max()
        shown = float(re.search(r"≤ ([0-9.]+) s\.e\.", ax.get_title()).group(1))
        assert shown == pytest.approx(z, abs=0.051)


@pytest.mark.slow
def test_derf_fig1_gap_matches_results(results_dir: Path) -> None:
    df = _frame(results_dir, "derf-fig1")
    fig = _draw(results_dir, "derf-fig1")
    assert len(fig.axes) == 2
    main = df[df["metric"] == "log_rel_var"]
    for ax, regime, paper in zip(fig.axes, ["cifar10", "mnist/cifar10"], [10, 5], strict=True):
        table = main[main["regime"] == regime].pivot_table(
            index="sigma", columns="mechanism", values="value"
        )
        gap = (table["gerf"] - table["sderf"]).max()
        exponent = float(re.search(r"e\$\^\{([0-9.]+)\}\$ at", ax.get_title()).group(1))
        assert exponent == pytest.approx(gap, abs=0.051)
        assert f"paper ≈ e$^{{{paper}}}$" in ax.get_title()
        arrows = [c for c in ax.get_children() if isinstance(c, Annotation)]
        assert len(arrows) == 1
        (_, y0), (_, y1) = arrows[0].xy, arrows[0].xyann
        assert abs(y1 - y0) == pytest.approx(gap)
        assert len(_curves(ax)) == 5  # TrigRF, PosRF, GERF, ADERF, SDERF


@pytest.mark.slow
def test_derf_fig2_skipped_regimes_are_empty_panels(tmp_path: Path) -> None:
    """Without image data the image regimes are panels that say why (no curves)."""
    empty = tmp_path / "no-data"
    empty.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RFBENCH_DATA", str(empty))
        _run("derf-fig2", tmp_path / "results")
    fig = _draw(tmp_path / "results", "derf-fig2")
    assert len(fig.axes) == 6
    for ax in fig.axes[:3]:
        assert len(_curves(ax)) == 6
    for ax in fig.axes[3:]:
        assert _curves(ax) == {}
        assert any("not available locally" in t.get_text().replace("\n", " ") for t in ax.texts)


# ------------------------------------------------------------------ classification


def test_simrf_fig8_curves_average_and_table2(results_dir: Path) -> None:
    df = _frame(results_dir, "simrf-fig8")
    fig = _draw(results_dir, "simrf-fig8")
    datasets = list(dict.fromkeys(df["dataset"]))
    assert len(fig.axes) == len(datasets) + 1  # + the average panel
    acc = df[df["metric"] == "accuracy"]
    for ax, ds in zip(fig.axes, datasets, strict=False):
        curves = _curves(ax)
        assert {"IIDRFs", "ORFs", "SimRFs", "exact kernel"} <= set(curves)
        assert len(_errorbars(ax)) == 3
        rows = acc[(acc["dataset"] == ds) & (acc["estimator"] == "positive@simrf")]
        x, y = curves["SimRFs"]
        np.testing.assert_allclose(y, rows.sort_values("m_per_d")["value"])
        np.testing.assert_allclose(x, rows.sort_values("m_per_d")["m_per_d"], rtol=0.05)
        exact = acc[(acc["dataset"] == ds) & (acc["estimator"] == "exact")]["value"].iloc[0]
        np.testing.assert_allclose(curves["exact kernel"][1], exact)
    # banknote's SimRF Table 2 value (0.7229) is marked at m = d
    stars = [ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "*"]
    assert [float(s.get_ydata()[0]) for s in stars] == [pytest.approx(0.7229)]
    # the average panel is the mean over data sets
    mean = acc[acc["estimator"] == "positive@iid"].groupby("m_per_d")["value"].mean()
    np.testing.assert_allclose(_curves(fig.axes[-1])["IIDRFs"][1], mean.sort_index())


def test_simrf_fig10_sigma_curves(results_dir: Path) -> None:
    df = _frame(results_dir, "simrf-fig10")
    fig = _draw(results_dir, "simrf-fig10")
    datasets = list(dict.fromkeys(df["dataset"]))
    assert len(fig.axes) == len(datasets)
    acc = df[df["metric"] == "accuracy"]
    for ax, ds in zip(fig.axes, datasets, strict=True):
        assert ax.get_xscale() == "log"
        curves = _curves(ax)
        iid = acc[(acc["dataset"] == ds) & (acc["estimator"] == "positive@iid")]
        iid = iid.sort_values("sigma")
        np.testing.assert_allclose(curves["IIDRFs"][0], iid["sigma"])
        np.testing.assert_allclose(curves["IIDRFs"][1], iid["value"])
        assert len(curves["exact kernel"][0]) == len(iid)
        best = iid.loc[iid["value"].idxmax(), "sigma"]
        assert curves["σ at the IIDRF peak"][0][0] == pytest.approx(best)
    # banknote has a published σ (SimRF code), wine does not
    assert "σ of the SimRF code" in _curves(fig.axes[datasets.index("banknote")])
    if "wine" in datasets:
        assert "σ of the SimRF code" not in _curves(fig.axes[datasets.index("wine")])


def test_derf_fig3_features_axis_and_percent(results_dir: Path) -> None:
    df = _frame(results_dir, "derf-fig3")
    fig = _draw(results_dir, "derf-fig3")
    datasets = list(dict.fromkeys(df["dataset"]))
    assert len(fig.axes) == len(datasets) + 1
    acc = df[df["metric"] == "accuracy"]
    # TrigRF: the paper's random-phase map (trig-phase@orf); [sin, cos]: the library's trig
    names = {"TrigRF", "TrigRF [sin, cos]", "PosRF", "GERF", "SADERF", "ADERF", "SDERF"}
    for ax, ds in zip(fig.axes, datasets, strict=False):
        curves = _curves(ax)
        assert names | {"exact kernel"} <= set(curves)
        assert len(_errorbars(ax)) == 7
        trig = acc[(acc["dataset"] == ds) & (acc["estimator"] == "trig@orf")].sort_values("m")
        sderf = acc[(acc["dataset"] == ds) & (acc["estimator"] == "sderf@orf")].sort_values("m")
        # trig's [sin, cos] map has M/2 projections: plotted at M = 2m features, like SDERF at m
        np.testing.assert_array_equal(2 * trig["m"].to_numpy(), sderf["m"].to_numpy())
        np.testing.assert_allclose(curves["TrigRF [sin, cos]"][0], sderf["m"], rtol=0.05)
        np.testing.assert_allclose(curves["SDERF"][0], sderf["m"], rtol=0.05)
        np.testing.assert_allclose(curves["SDERF"][1], 100 * sderf["value"])


def test_derf_fig3_labels_a_curve_with_no_spread_over_draws() -> None:
    """On car both TrigRFs tune to σ = 0.01, where every draw predicts the majority class: a flat
    curve with zero error bars, which the panel says rather than leave a reader to wonder."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from rfbench.present.plots.classify import _mark_alike

    rows = pd.DataFrame({
        "estimator": ["trig@orf"] * 2 + ["sderf@orf"] * 2,
        "features": [16, 32, 16, 32], "sigma": [0.01, 0.01, 0.6, 0.6],
        "value": [0.65, 0.65, 0.67, 0.69], "stderr": [0.0, 0.0, 0.001, 0.0],
    })  # fmt: skip
    fig, ax = plt.subplots()
    ax.set_ylim(64.5, 70)
    _mark_alike(ax, rows, "features", 100.0)
    (label,) = [c for c in ax.get_children() if isinstance(c, Annotation)]
    assert label.get_text() == "σ = 0.01: no spread over draws" and label.xy == (32, 65.0)
    assert ax.get_ylim()[0] < 64.5  # room for the label below the curve
    plt.close(fig)
