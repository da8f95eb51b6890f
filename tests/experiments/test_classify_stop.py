"""classify with ``stop = "resolved"``: cells stop when their declared comparisons are resolved,
deterministically; ``stop = "fixed"`` keeps today's jobs and rows
(docs/experiments.md#classify-stop)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pytest
from cli_helpers import one_line_error
from data_facts import uses_fixtures
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.datasets import available
from rfbench.compute.experiments import ConfigError
from rfbench.compute.experiments.base import job_key
from rfbench.compute.experiments.classify.experiment import Classify
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run
from rfbench.compute.seeding import job_rng

ROOT = Path(__file__).resolve().parents[2]
#: SimRF Table 3, banknote at m = d′ = 4: SimRF beats IIDRF by 0.075 at standard errors of 0.002
CLEAR = {"dataset": ["banknote"], "estimators": ["positive@iid", "positive@simrf"], "m": [1],
         "pad": True, "exact": False, "stop": "resolved", "compare": "positive@simrf",
         "batch": 25}  # fmt: skip


@pytest.fixture(autouse=True)
def _data_env(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(data_dir))
    if not available("banknote"):
        pytest.skip("banknote not available")


def _run(tmp_path: Path, name: str, backend: str = "serial", workers: int = 1, **params):
    exp = Classify()
    config = exp.check_config({**CLEAR, **params})
    options = RunOptions(out=tmp_path / f"{name}.parquet", backend=backend, workers=workers,
                         quiet=True)  # fmt: skip
    res = load_results(run(exp, config, options))
    return res[res["metric"] == "accuracy"].set_index("estimator")


def test_a_cell_stops_when_its_comparison_is_resolved_or_at_the_cap(tmp_path):
    """Resolved: before the cap, with the difference's interval above zero; else at the cap with
    zero inside. On the real banknote (SimRF's gap of 0.075 at standard errors of 0.002) it is
    resolved early; the fixture's 10 test rows may leave it open."""
    rows = _run(tmp_path, "clear", trials=500)
    n = rows["n_trials"].iloc[0]
    assert (rows["n_trials"] == n).all() and len(set(rows["stop"])) == 1
    iid = rows.loc["positive@iid"]
    assert iid["versus"] == "positive@simrf" and pd.isna(rows.loc["positive@simrf", "versus"])
    if iid["stop"] == "resolved":
        assert n < 500 and n % 25 == 0 and iid["diff_low"] > 0 and iid["p_anytime"] < 0.05
    else:
        assert n == 500 and iid["diff_low"] <= 0 <= iid["diff_high"]
    if not uses_fixtures():
        assert iid["stop"] == "resolved"
    for _, row in rows.iterrows():  # the row's own interval holds its mean and is wider than ±2 se
        assert row["cs_low"] < row["value"] - 2 * row["stderr"]
        assert row["cs_high"] > row["value"] + 2 * row["stderr"]


def test_the_stopping_point_is_the_same_on_any_backend(tmp_path):
    serial = _run(tmp_path, "serial", trials=200)
    processes = _run(tmp_path, "processes", backend="processes", workers=2, trials=200)
    pd.testing.assert_frame_equal(serial, processes)


def test_fixed_keeps_the_jobs_of_today():
    exp = Classify()
    fixed = exp.check_config({**CLEAR, "stop": "fixed"})
    assert all("estimators" not in job and "stop" not in job for job in exp.grid(fixed))
    cells = exp.grid(exp.check_config(CLEAR))
    assert len(cells) == 1 and cells[0]["estimators"] == ("positive@iid", "positive@simrf")


def test_fixed_reproduces_committed_classify_rows_bit_for_bit(real_data_dir, monkeypatch):
    """The banknote IID and SimRF jobs of the committed paper run of SimRF Table 3 (a config that
    keeps stop = fixed), recomputed with stop = fixed: the same jobs, streams and numbers."""
    monkeypatch.setenv("RFBENCH_DATA", str(real_data_dir))
    committed = pd.read_parquet(ROOT / "results" / "classify" / "simrf-table3.parquet")
    with open(ROOT / "configs" / "simrf" / "table3.toml", "rb") as fh:
        cfg = tomllib.load(fh)
    assert cfg["params"].get("stop", "fixed") == "fixed"
    exp = Classify()
    trials = {"banknote": cfg["params"]["trials_by_dataset"]["banknote"]}
    pair = ["positive@iid", "positive@simrf"]
    params = {**cfg["params"], "dataset": ["banknote"], "stop": "fixed",
              "trials_by_dataset": trials, "estimators": pair}  # fmt: skip
    config = exp.resolve_config(params, "paper", name=cfg["name"], figure=cfg["figure"])
    checked = 0
    for spec in exp.grid(config):
        for row in exp.run_job(spec, job_rng(0, job_key("classify", spec))):
            same = committed[
                (committed["dataset"] == row["dataset"])
                & (committed["estimator"] == row["estimator"])
                & (committed["metric"] == row["metric"])
            ]
            assert len(same) == 1, row
            assert same["value"].iloc[0] == row["value"]
            assert same["n_trials"].iloc[0] == row["n_trials"]
            checked += 1
    assert checked == 4  # IID, SimRF, the exact kernel's accuracy and v_mean


@pytest.mark.parametrize(
    "bad", [{"compare": "trig@orf"}, {"stream": "released", "estimators": ["positive@iid"]}]
)
def test_a_bad_sequential_config_is_refused(bad):
    with pytest.raises(ConfigError):
        Classify().check_config({**CLEAR, **bad})


def test_run_takes_stop_for_configs_that_have_it(tmp_path):
    result = CliRunner().invoke(
        app, ["run", str(ROOT / "configs" / "derf" / "fig3.toml"), "--stop", "sometimes"]
    )
    assert result.exit_code == 2 and "stop" in one_line_error(result)


def test_a_tuned_cell_picks_the_best_surviving_sigma_and_tests_on_its_draws(tmp_path):
    exp = Classify()
    config = exp.check_config(
        {**CLEAR, "protocol": "derf", "tune": True, "sigma": [0.01, 0.3, 1.0, 30.0],
         "val_trials": 20, "trials": 60, "batch": 20, "compat": False, "pad": False}
    )  # fmt: skip
    res = load_results(run(exp, config, RunOptions(out=tmp_path / "t.parquet", quiet=True)))
    for name, val in res[res["metric"] == "val_accuracy"].groupby("estimator"):
        assert val["n_trials"].between(10, 20).all()
        survivors = val[val["n_trials"] == val["n_trials"].max()]
        test = res[(res["metric"] == "accuracy") & (res["estimator"] == name)].iloc[0]
        assert test["sigma"] == survivors.loc[survivors["value"].idxmax(), "sigma"], name
        assert test["n_trials"] in (20, 40, 60)  # the 20 validation draws, then batches of 20


def test_stop_applies_to_the_configs_whose_experiment_has_it():
    from rfbench.cli.experiments import stop_overrides

    assert stop_overrides(ROOT / "configs" / "derf" / "fig3.toml", "fixed") == {"stop": "fixed"}
    assert stop_overrides(ROOT / "configs" / "hrf" / "fig2.toml", "resolved") == {}
    assert stop_overrides(ROOT / "configs" / "hrf" / "fig2.toml", None) == {}
    with pytest.raises(ConfigError, match="stop"):
        stop_overrides(ROOT / "configs" / "hrf" / "fig2.toml", "later")


SELECT = {**CLEAR, "estimators": ["positive@iid"], "compare": "", "m": [2], "trials": 80,
          "sigma": [0.01, 0.3, 1.0, 3.0], "select_sigma": True, "batch": 20}  # fmt: skip


def test_a_sigma_cell_drops_the_sigmas_clearly_behind_and_keeps_the_best(tmp_path):
    from rfbench.compute import sequential
    from rfbench.present.statistics import peak_rows

    exp = Classify()
    config = exp.check_config(SELECT)
    jobs = exp.grid(config)
    cells = [job for job in jobs if "sigma_grid" in job]
    assert len(cells) == 1 and cells[0]["sigma_grid"] == (0.01, 0.3, 1.0, 3.0)
    res = load_results(run(exp, config, RunOptions(out=tmp_path / "s.parquet", quiet=True)))
    rf = res[(res["metric"] == "accuracy") & (res["estimator"] == "positive@iid")]
    assert sorted(rf["sigma"]) == [0.01, 0.3, 1.0, 3.0]
    assert rf["n_trials"].isin([20, 40, 60, 80]).all()
    # σ = 0.01 predicts the majority class at every draw: dropped well before the cap
    tiny = rf[rf["sigma"] == 0.01].iloc[0]
    assert tiny["n_trials"] <= 40 and tiny["stop"] == "resolved"
    assert rf["n_trials"].sum() < 4 * 80
    assert (rf["cs_low"] <= rf["value"] + 1e-12).all() and (
        rf["value"] <= rf["cs_high"] + 1e-12
    ).all()
    # the figure's and the summary's peak is the σ the elimination selects
    cell = cells[0]
    values: dict = {}
    select_best = sequential.select_best

    def select(evaluate, grid, n, look):  # what the cell's rows were drawn with
        best, values["drawn"] = select_best(evaluate, grid, n, look)
        values["best"] = best
        return best, values["drawn"]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sequential, "select_best", select)
        again = exp.run_job(cell, job_rng(0, job_key("classify", cell)))
    assert [r["value"] for r in again if r["metric"] == "accuracy"] == rf["value"].tolist()
    assert peak_rows(rf, ["estimator"])["sigma"].iloc[0] == values["best"]


def test_select_sigma_needs_a_sigma_grid():
    with pytest.raises(ConfigError, match="select_sigma"):
        Classify().check_config({**SELECT, "sigma": [0.3]})
    # with stop = fixed it asks nothing: today's jobs, one per σ
    fixed = Classify().check_config({**SELECT, "stop": "fixed"})
    assert all("sigma_grid" not in job for job in Classify().grid(fixed))
