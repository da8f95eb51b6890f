"""A budget is named by its unit (issue 27): the option ``projection_budget`` of pointwise, cost
and precision is the projection budget M (attention's ``budget`` is a feature budget F), ``m`` is
the projections everywhere. The old name ``m`` (cost also ``crossover_m``) still works for one
release, with a one-line notice; both names are an error; a hybrid's rows carry m = M // n and
``projection_budget`` = M."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments import ConfigError, get_experiment
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, resolve_file, run
from rfbench.present.statistics import projection_budget

NOTICE = "is now called 'projection_budget'"


def _notices(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "rfbench.params"]


@pytest.mark.parametrize(
    ("name", "old", "new", "value"),
    [
        ("pointwise", "m", "projection_budget", [64]),
        ("cost", "m", "projection_budget", [32]),
        ("cost", "crossover_m", "crossover_projection_budget", 32),
        ("precision", "m", "projection_budget", 32),
    ],
)
def test_the_old_name_is_the_new_one_with_a_one_line_notice(caplog, name, old, new, value):
    exp = get_experiment(name)
    with caplog.at_level(logging.WARNING, logger="rfbench.params"):
        config = exp.resolve_config({old: value}, "quick")
    assert config[new] == value and old not in config
    (notice,) = _notices(caplog)
    assert f"{old!r} of experiment {name!r} is now called {new!r}" in notice
    assert "\n" not in notice
    caplog.clear()
    assert exp.resolve_config({new: value}, "quick") == config and not _notices(caplog)


def test_both_names_are_one_config_error():
    with pytest.raises(ConfigError) as info:
        get_experiment("cost").resolve_config({"m": [16], "projection_budget": [32]})
    text = str(info.value)
    assert "'projection_budget' and its old name 'm'" in text and "\n" not in text


def test_an_old_config_file_works_and_a_mixed_one_is_refused(tmp_path: Path, caplog):
    old = tmp_path / "old.toml"
    old.write_text('experiment = "cost"\n[params]\nm = [32]\n[profiles.quick]\nm = [8, 32]\n')
    with caplog.at_level(logging.WARNING, logger="rfbench.params"):
        _, config = resolve_file(
            old, "quick"
        )  # the file's m wins over cost's built-in quick budget
    assert config["projection_budget"] == [8, 32] and len(_notices(caplog)) == 2
    _, paper = resolve_file(old, "paper")
    assert paper["projection_budget"] == [32]
    mixed = tmp_path / "mixed.toml"
    mixed.write_text('experiment = "cost"\n[params]\nm = [32]\nprojection_budget = [64]\n')
    with pytest.raises(ConfigError, match="both 'projection_budget' and its old name 'm'"):
        resolve_file(mixed, "quick")


def test_the_command_line_takes_the_old_flag_with_a_notice_and_refuses_both(tmp_path, caplog):
    out = tmp_path / "p.parquet"
    args = ["precision", "--components", "trig", "--couplings", "iid", "--dtypes", "float64",
            "--forms", "logspace", "--r", "1", "--angles", "2", "--samples", "2",
            "--attention-draws", "1", "--attention-points", "2", "--d", "4", "--quiet",
            "--no-plot", "--out", str(out)]  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="rfbench.params"):
        done = CliRunner().invoke(app, [*args, "--m", "6"])
    assert done.exit_code == 0, done.output
    assert len(_notices(caplog)) == 1 and set(load_results(out)["m"]) == {6}
    both = CliRunner().invoke(app, [*args, "--m", "6", "--projection-budget", "8"])
    assert both.exit_code == 2
    (line,) = [x for x in both.output.splitlines() if x.strip()]
    assert "both 'projection_budget' and its old name 'm'" in line
    help_text = " ".join(CliRunner().invoke(app, ["cost", "--help"]).output.split())
    assert "--projection-budgets, --projection-budget INT[,INT...]" in help_text
    assert "old name of --projection-budgets" in help_text


@pytest.fixture(scope="module")
def cost_rows() -> pd.DataFrame:
    exp = get_experiment("cost")
    config = exp.resolve_config(
        {"estimators": ["trig@iid", "angular-hybrid@iid"], "projection_budget": [16, 32], "n": 4,
         "crossover_projection_budget": 8, "crossover_d": [8], "projection_d": []},
        "quick",
    )  # fmt: skip
    jobs = exp.grid(config)
    return pd.concat([exp.run_job(s, np.random.default_rng(i)) for i, s in enumerate(jobs)])


def _as_written_before(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows as rfbench wrote them before ``projection_budget`` was a column: M in ``m``."""
    return rows.assign(m=projection_budget(rows).astype(int)).drop(columns="projection_budget")


def test_a_cost_hybrid_row_has_its_projections_as_m_and_its_budget(cost_rows):
    rows = cost_rows
    hybrid, trig = (rows[rows["estimator"] == e] for e in ("angular-hybrid@iid", "trig@iid"))
    front, cross = (hybrid[hybrid["part"] == p] for p in ("frontier", "crossover"))
    pairs = set(zip(front["m"], front["projection_budget"], strict=True))
    assert pairs == {(16 // 4, 16), (32 // 4, 32)}
    assert set(cross["m"]) == {8 // 4} and set(cross["projection_budget"]) == {8}
    assert set(trig["m"]) == {16, 32, 8} and trig["projection_budget"].isna().all()
    assert set(projection_budget(rows[rows["part"] == "frontier"])) == {16, 32}


def test_the_cost_report_reads_budgets_as_it_read_the_old_rows(cost_rows):
    """The report's cost section is the same from the new rows and from the rows as written
    before (M in m): its table is at the largest budget M and its slopes run over M."""
    from rfbench.present.report.beyond import _cost

    assert _cost(cost_rows) == _cost(_as_written_before(cost_rows))
    assert "M = 32" in "\n".join(_cost(cost_rows))


def test_a_precision_hybrid_row_has_its_projections_as_m_and_its_budget():
    exp = get_experiment("precision")
    config = exp.resolve_config(
        {"components": ["trig", "angular-hybrid"], "couplings": ["iid"], "dtypes": ["float32"],
         "forms": ["logspace"], "r": [1.0], "projection_budget": 24, "n": 8, "d": 4, "angles": 2,
         "samples": 2, "attention_points": 2, "attention_draws": 1},
    )  # fmt: skip
    rows = pd.concat([exp.run_job(s, np.random.default_rng(0)) for s in exp.grid(config)])
    hybrid, trig = (rows[rows["estimator"] == e] for e in ("angular-hybrid@iid", "trig@iid"))
    assert set(hybrid["m"]) == {3} and set(hybrid["n"]) == {8}
    assert set(hybrid["projection_budget"]) == {24}
    assert set(trig["m"]) == {24} and trig["projection_budget"].isna().all()
    assert set(projection_budget(rows)) == {24}


def test_a_flop_matched_pointwise_hybrid_row_carries_its_budget(tmp_path: Path):
    params = {
        "estimators": ["trig@iid", "angular-hybrid@iid", "angular-hybrid@iid:5:2"],
        "projection_budget": [16, 32],
        "n": 4,
        "angles": 3,
        "samples": 20,
        "r": [1.0],
        "d": 4,
    }
    out = run("pointwise", params, RunOptions(seed=1, out=tmp_path / "p.parquet",
                                              backend="serial", quiet=True))  # fmt: skip
    rows = load_results(out)
    hybrid = rows[(rows["estimator"] == "angular-hybrid@iid") & (rows["n"] == 4)]
    pairs = set(zip(hybrid["m"], hybrid["projection_budget"], strict=True))
    assert pairs == {(4, 16), (8, 32)}  # m = M // n and M, on every row of the curve
    fixed = rows[(rows["estimator"] == "angular-hybrid@iid") & (rows["n"] == 2)]
    assert set(fixed["m"]) == {5} and fixed["projection_budget"].isna().all()  # name:m:n: no budget
    trig = rows[rows["estimator"] == "trig@iid"]
    assert set(trig["m"]) == {16, 32} and trig["projection_budget"].isna().all()


def test_two_budgets_giving_a_hybrid_the_same_m_are_a_config_error():
    exp = get_experiment("pointwise")
    with pytest.raises(ConfigError, match="both give m = 16 with n = 8"):
        exp.resolve_config({"estimators": ["angular-hybrid@iid"], "projection_budget": [128, 130]})
    exp.resolve_config(
        {"estimators": ["trig@iid"], "projection_budget": [128, 130]}
    )  # no hybrid: fine


def test_attention_s_feature_budget_is_not_read_as_a_projection_budget():
    """``budget`` is attention's feature budget F, another unit: M is read from
    ``projection_budget`` or ``m``, never from ``budget``."""
    rows = pd.DataFrame({"m": [4, 16], "budget": [64, 64], "projection_budget": [32, None]})
    assert list(projection_budget(rows)) == [32.0, 16.0]
    assert list(projection_budget(rows.drop(columns="projection_budget"))) == [4.0, 16.0]
