"""The beyond-the-papers outputs: small precision and cost runs draw their figures and render
the report section from the parquet files alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from rfbench.compute.experiments import get_experiment
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run
from rfbench.present.plots import draw_all
from rfbench.present.report.beyond import beyond_section

FIGURES = ("beyond-precision", "beyond-precision-error", "beyond-cost")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("beyond")
    small = {
        "precision": {"r": [0.5, 5.0], "couplings": ["iid"], "samples": 20, "angles": 3,
                      "attention_draws": 2, "attention_points": 8},
        "cost": {"estimators": ["positive@iid", "hyperbolic@orf"], "projection_budget": [8, 16],
                 "points": 16, "crossover_d": [8, 16], "crossover_points": 8},
    }  # fmt: skip
    for name, params in small.items():
        exp = get_experiment(name)
        config = exp.resolve_config(params, profile="quick", name=f"beyond-{name}")
        run(
            exp,
            config,
            RunOptions(out=folder / name / f"beyond-{name}.parquet", backend="serial", quiet=True),
        )
    return folder


@pytest.mark.slow
def test_precision_rows_have_a_dtype_and_cost_rows_flops(results):
    prec = load_results(results / "precision" / "beyond-precision.parquet")
    cost = load_results(results / "cost" / "beyond-cost.parquet")
    assert {"float16", "bfloat16"} <= set(prec["dtype"]) and prec["r"].max() == 5.0
    assert "flops" in set(cost["metric"]) and "crossover_L" in set(cost["metric"])


@pytest.mark.slow
def test_figures_draw(results, tmp_path):
    outcomes = draw_all(results, tmp_path, only=FIGURES)
    assert [o.id for o in outcomes] == list(FIGURES)
    assert all(not o.problem and o.paths for o in outcomes), [o.problem for o in outcomes]


def test_report_section_renders(results, tmp_path):
    text = "\n".join(beyond_section(results, tmp_path, tmp_path / "figures"))
    assert "## Beyond the papers" in text
    assert "Numerical safety per dtype" in text and "Cost: error against time" in text
    assert "float16 naive" in text  # trig overflows in float16 at r = 5
    assert beyond_section(tmp_path, tmp_path, tmp_path) == []
