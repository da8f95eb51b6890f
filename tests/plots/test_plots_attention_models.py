"""``beyond-attention-models``: one panel per (model, mask) from whichever runs are in the
results; a missing run's panel names its command, and ``rfbench figures`` draws the rest."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from attention_runs import run_rows
from typer.testing import CliRunner

from rfbench.compute.experiments import list_experiments
from rfbench.compute.results import make_provenance, write_results
from rfbench.present.attention_stats import RUNS, median_ci
from rfbench.present.plots import FIGURES, draw_figure, list_figures
from rfbench.present.plots.draw import load_inputs

list_experiments()  # registers the attention metrics (needed to write their rows)
NAME = "beyond-attention-models"
L6, L6C, L3, L3C = RUNS


def _write(folder: Path, names: list[str]) -> Path:
    for i, name in enumerate(names):
        df = run_rows(model=f"model{i // 2}", causal=name.endswith("-causal"), seed=i)
        df = df.assign(experiment="attention", figure=NAME, kernel="softmax")
        prov = make_provenance(config={"name": name}, seed=0, command_line="test")
        write_results(df, folder / "attention" / f"{name}.parquet", prov)
    return folder


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


@pytest.fixture(scope="module")
def spec():
    list_figures()
    return FIGURES[NAME]


def test_a_partial_figure_gets_the_runs_that_exist_and_names_the_others(tmp_path, spec) -> None:
    assert spec.partial and set(spec.needs) == set(RUNS)
    results = _write(tmp_path / "results", [L6, L6C, L3])
    frames, problem = load_inputs(spec, results)
    assert not problem and set(frames) == {L6, L6C, L3}
    fig = spec.draw(frames)
    panels = [ax for ax in fig.axes if ax.has_data()]
    assert len(panels) == 3
    assert any(f"rfbench run {RUNS[L3C]}" in text for text in _texts(fig))
    assert {ax.get_title().split(" (")[0] for ax in panels} == {
        "model0, bidirectional", "model0, causal", "model1, bidirectional"}  # fmt: skip
    plt.close(fig)
    outcome = draw_figure(spec, results, tmp_path / "figures")
    assert not outcome.problem and outcome.missing == (L3C,)
    assert (tmp_path / "figures" / f"{NAME}.png").stat().st_size > 1000
    empty, problem = load_inputs(spec, tmp_path / "nothing")
    assert not empty and problem.startswith("missing results: ")


def test_each_panel_draws_the_median_over_heads_and_uniform_attention(tmp_path, spec) -> None:
    results = _write(tmp_path / "results", list(RUNS))
    frames, _ = load_inputs(spec, results)
    fig = spec.draw(frames)
    df = frames[L3]
    ax = next(a for a in fig.axes if a.get_title().startswith("model1, bidirectional"))
    lines = {line.get_label(): line for line in ax.get_lines()}
    curves = {c.get_label(): c.lines[0] for c in ax.containers}
    heads = df[(df["kind"] == "heads") & (df["estimator"] == "window")]
    expected = [median_ci(part["value"].to_numpy())[0] for _, part in heads.groupby("budget")]
    assert list(curves["window"].get_ydata()) == pytest.approx(expected)
    assert list(curves["window"].get_xdata()) == [64, 256]
    uniform = median_ci(df[df["kind"] == "baselines"]["value"].to_numpy())[0]
    assert lines["uniform"].get_ydata()[0] == pytest.approx(uniform)
    legend = [t.get_text() for a in fig.axes if a.get_legend() for t in a.get_legend().texts]
    assert {"positive@orf", "hyperbolic@orf", "gerf@orf", "window", "top-k"} <= set(legend)
    assert not any("rfbench run" in text for text in _texts(fig))
    plt.close(fig)


def test_rfbench_figures_draws_it_without_the_second_model(tmp_path) -> None:
    from rfbench.cli.app import app

    results = _write(tmp_path / "results", [L6, L6C])
    done = CliRunner().invoke(app, ["figures", "--results", str(results), "--only", NAME])
    assert done.exit_code == 0, done.output
    assert "1 of 1 figures drawn" in done.output and L3 in done.output
    assert (results / "figures" / f"{NAME}.png").is_file()
