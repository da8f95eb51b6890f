"""Pointwise figures (HRF Figs. 2/5, CSE Figs. 1–5) drawn from quick-profile results made here:
files written, panel counts, lines and bands, and that what is drawn is what the parquet holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.features.theory.negatives import trig_negative_probability
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, load_config, run
from rfbench.present.plots.draw import draw_figure
from rfbench.present.plots.pointwise import EXACT, Curve, curves, log_floor, tail_note, zero_note
from rfbench.present.plots.registry import FIGURES, list_figures

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
IDS = ("hrf-fig2", "hrf-fig5", "cse-fig1", "cse-fig2", "cse-fig3", "cse-fig4", "cse-fig5")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("results")
    for figure_id in IDS:
        paper, fig = figure_id.split("-")
        cfg = load_config(CONFIGS / paper / f"{fig}.toml", "quick")
        out = root / "pointwise" / f"{figure_id}.parquet"
        run("pointwise", cfg, RunOptions(out=out, backend="serial", quiet=True))
    list_figures()
    return root


def _frame(results: Path, figure_id: str) -> pd.DataFrame:
    return load_results(results / "pointwise" / f"{figure_id}.parquet")


def _draw(figure_id: str, df: pd.DataFrame):
    return FIGURES[figure_id].draw({figure_id: df})


def _with_radius(df: pd.DataFrame, r: float) -> pd.DataFrame:
    """The rows once more at another radius (layout tests only: the values are not at r)."""
    return pd.concat([df, df.assign(r=r)], ignore_index=True)


@pytest.mark.slow
@pytest.mark.parametrize("figure_id", IDS)
def test_figure_files_are_written(results, tmp_path, figure_id):
    outcome = draw_figure(FIGURES[figure_id], results, tmp_path)
    assert not outcome.problem, outcome.problem
    assert sorted(p.name for p in outcome.paths) == [f"{figure_id}.pdf", f"{figure_id}.png"]
    assert all(p.stat().st_size > 10_000 for p in outcome.paths)


@pytest.mark.slow
def test_curves_pivot_the_long_rows(results):
    df = _frame(results, "hrf-fig2")
    items = curves(df)
    assert [c.estimator for c in items] == [
        "trig@iid", "hyperbolic@iid", "angular-hybrid@iid", "gaussian-hybrid@iid",
    ]  # fmt: skip
    hybrid = items[2]
    assert (hybrid.m, hybrid.n, hybrid.variant, hybrid.r) == (16, 8, "independent", 1.0)
    assert items[0].variant is None and items[0].n is None
    rows = df[(df["estimator"] == "hyperbolic@iid") & (df["metric"] == "rel_rmse")]
    rows = rows.sort_values("theta")
    np.testing.assert_array_equal(items[1].theta, rows["theta"])
    np.testing.assert_array_equal(items[1].values("rel_rmse"), rows["value"])
    unresolved = rows["resolved"].eq(False).fillna(False).to_numpy(bool)
    shown = np.where(unresolved, 0.0, rows["stderr"].fillna(0).to_numpy(float))
    np.testing.assert_array_equal(items[1].stderr("rel_rmse"), shown)  # no band if unresolved
    # true value e^{r² cos θ} at r = 1 (HRF Eq. 1): θ = 0 and π
    np.testing.assert_allclose(items[0].values("true")[[0, -1]], [np.e, 1 / np.e], rtol=1e-12)


def test_hrf_grid_panels_and_what_they_show(results):
    df = _frame(results, "hrf-fig2")
    fig = _draw("hrf-fig2", df)
    # key strip + (value axis, error twin) per estimator + one summary panel (quick: r = 1 only)
    assert len(fig.axes) == 1 + 2 * 4 + 1
    trig, twin = fig.axes[1], fig.axes[2]
    assert len(trig.get_lines()) == 4  # q05, q95, true, zero level
    assert len(trig.collections) == 1  # the 5–95 % band
    assert len(twin.get_lines()) == 2 and len(twin.collections) == 1  # error ±2 s.e., theory
    c = curves(df)[0]
    error, theory = twin.get_lines()
    np.testing.assert_array_equal(error.get_ydata(), c.values("rel_rmse"))
    np.testing.assert_array_equal(theory.get_ydata(), c.values("theory_rel_rmse"))
    np.testing.assert_array_equal(trig.get_lines()[2].get_ydata(), c.values("true"))
    lo, hi = trig.get_ylim()
    rlo, rhi = twin.get_ylim()
    assert lo <= 0 < hi and np.isclose(lo / hi, rlo / rhi)  # zero levels aligned
    summary = fig.axes[-1]
    assert summary.get_yscale() == "log"
    assert len(summary.get_lines()) == 8  # 4 empirical + 4 closed forms


@pytest.mark.slow
def test_hrf_grid_has_a_row_and_a_summary_per_radius(results):
    df = _frame(results, "hrf-fig5")
    three = pd.concat([df, df.assign(r=1.25), df.assign(r=1.5)], ignore_index=True)
    fig = _draw("hrf-fig5", three)
    assert len(fig.axes) == 1 + 2 * 4 * 3 + 3
    assert [ax.get_yscale() for ax in fig.axes[-3:]] == ["log"] * 3


@pytest.mark.parametrize(
    ("figure_id", "extra_r", "columns", "panels"),
    [
        ("cse-fig1", None, 1, 1 + 2),  # one column: |err|/K and √MSE/K side by side
        ("cse-fig2", 2.0, 2, 1 + 2 * 2),  # a column per r
        ("cse-fig3", None, 2, 1 + 2 * 2),  # a column per m (quick: 64, 128)
        ("cse-fig5", None, 1, 1 + 3),  # + the ratio of the sharing variants
    ],
)
def test_cse_error_figures(results, figure_id, extra_r, columns, panels):
    df = _frame(results, figure_id)
    if extra_r is not None:
        df = _with_radius(df, extra_r)
    fig = _draw(figure_id, df)
    assert len(fig.axes) == panels
    if figure_id == "cse-fig2":  # the title names the radii drawn, not the paper's three
        assert "for r = 1, 2 (" in fig._suptitle.get_text()
    per_column = len(curves(df)) // columns
    for ax in fig.axes[1 : 1 + 2 * columns]:  # the key strip first; fig. 5's ratio panel last
        assert ax.get_yscale() == "log"
        assert len(ax.get_lines()) >= per_column
        assert len(ax.collections) >= per_column  # a ±2 s.e. band per curve


def test_cse_fig1_rows_hold_mae_and_rmse_with_theory_only_where_it_exists(results):
    df = _frame(results, "cse-fig1")
    fig = _draw("cse-fig1", df)
    mae, rmse = fig.axes[1], fig.axes[2]
    items = {c.estimator: c for c in curves(df)}
    assert len(mae.get_lines()) == 3  # trig, FAVOR+, CSE
    # the shared-all CSE is biased and has no closed form (docs/methods.md#cse-erratum-17)
    assert not items["cse"].has("theory_rel_rmse")
    assert len(rmse.get_lines()) == 3 + 2
    np.testing.assert_array_equal(mae.get_lines()[2].get_ydata(), items["cse"].values("rel_mae"))


def test_cse_fig5_ratio_panel(results):
    df = _frame(results, "cse-fig5")
    ratio = _draw("cse-fig5", df).axes[-1]
    items = curves(df)
    ref = next(c for c in items if c.variant == "independent")
    base = next(c for c in items if c.variant == "shared-base")
    want = base.values("rel_rmse") / ref.values("rel_rmse")
    got = ratio.get_lines()[0].get_ydata()
    ok = ref.values("rel_rmse") > EXACT
    np.testing.assert_allclose(got[ok], want[ok])
    assert np.isnan(got[~ok]).all()


@pytest.mark.slow
def test_cse_fig4_bars_and_the_papers_count(results):
    df = _frame(results, "cse-fig4")
    fig = _draw("cse-fig4", df)
    bars, fractions = fig.axes
    assert len(fig.axes) == 2
    counts = df[df["metric"] == "neg_count"].set_index("estimator")["value"]
    heights = [p.get_height() for p in bars.patches]
    assert heights == list(counts[["trig@iid", "hyperbolic@iid", "cse"]])
    assert counts["hyperbolic@iid"] == 0  # positive by construction
    assert any(np.allclose(seg[:, 1], 89) for c in bars.collections for seg in c.get_segments())
    lines = fractions.get_lines()
    assert len(lines) == 3 + len(df.loc[df["estimator"] == "trig@iid", "m"].unique())
    exact = lines[0]  # drawn before trig's measured curve: P(K̂ < 0 | θ, m, r) in %
    trig = next(c for c in curves(df) if c.estimator == "trig@iid")
    want = 100 * trig_negative_probability(exact.get_xdata(), int(trig.m), trig.r)
    np.testing.assert_allclose(exact.get_ydata(), want)


def test_log_floor_ignores_round_off_of_exact_estimates():
    assert log_floor([np.array([1e-17, 0.1, 0.5]), np.array([np.nan, 0.2])]) == 0.05
    assert log_floor([np.array([0.0])]) == EXACT


def _curve(rel: float, theory: float) -> Curve:
    data = pd.DataFrame(
        {"rel_rmse": [rel], "rel_rmse_se": [0.01], "theory_rel_rmse": [theory]},
        index=pd.Index([0.5], name="theta"),
    )
    return Curve("hyperbolic@iid", None, 128, None, 1.0, data)


def test_tail_note_names_only_estimators_far_below_their_closed_form():
    assert tail_note([_curve(1.0, 1.05)]) == []
    assert tail_note([_curve(1.0, 1.9)]) == []  # 1.02 + 2·0.01 is above half of 1.9
    (note,) = tail_note([_curve(1.0, 5.0)])
    assert "FAVOR+" in note.get_label()


def test_curves_off_the_log_axis_at_the_ends_get_a_note():
    """Issue 39: a curve exact at θ = 0 or π (error 0 or its round-off) drops off the log axis;
    the figure says so, naming the curve."""
    data = pd.DataFrame(
        {"rel_rmse": [1e-17, 0.3, 0.0], "rel_rmse_se": [0.0, 0.01, 0.0]},
        index=pd.Index([0.0, np.pi / 2, np.pi], name="theta"),
    )
    exact_ends = Curve("angular-hybrid@iid", None, 16, 8, 1.0, data)
    assert zero_note([_curve(1.0, 1.05)]) == ""
    note = zero_note([exact_ends, _curve(1.0, 1.05)])
    assert "θ = 0, π" in note and "angular hybrid" in note and "FAVOR" not in note
    (entry,) = tail_note([exact_ends])
    assert "off the log axis" in entry.get_label()
