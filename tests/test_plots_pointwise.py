"""Pointwise figures (HRF Figs. 2/5, CSE Figs. 1-5) drawn from quick-profile results."""

from __future__ import annotations

from pathlib import Path

import pytest

from rfbench.plots import FIGURES, draw_figure, list_figures
from rfbench.runner import load_config, run

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
IDS = {
    "hrf-fig2": "hrf/fig2",
    "cse-fig2": "cse/fig2",
    "cse-fig4": "cse/fig4",
    "cse-fig5": "cse/fig5",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("results")
    for figure_id, config in IDS.items():
        cfg = load_config(CONFIGS / f"{config}.toml", "quick")
        run("pointwise", cfg, out=root / "pointwise" / f"{figure_id}.parquet",
            backend="serial", quiet=True)  # fmt: skip
    return root


@pytest.mark.parametrize("figure_id", sorted(IDS))
def test_figure_is_drawn(results, tmp_path, figure_id):
    list_figures()
    outcome = draw_figure(FIGURES[figure_id], results, tmp_path)
    assert not outcome.problem, outcome.problem
    assert {p.suffix for p in outcome.paths} == {".png", ".pdf"}
    assert all(p.stat().st_size > 5_000 for p in outcome.paths)


def test_panels_and_lines(results):
    from rfbench.results import load_results

    list_figures()
    fig = FIGURES["hrf-fig2"].draw(
        {"hrf-fig2": load_results(results / "pointwise/hrf-fig2.parquet")}
    )
    with_data = [ax for ax in fig.axes if ax.has_data()]
    assert len(with_data) >= 4  # one panel per estimator (quick profile: one r) + summary
    fig5 = FIGURES["cse-fig5"].draw(
        {"cse-fig5": load_results(results / "pointwise/cse-fig5.parquet")}
    )
    assert len(fig5.axes) == 4  # baselines + the three sharing variants
    assert all(len(ax.get_lines()) >= 1 for ax in fig5.axes)
