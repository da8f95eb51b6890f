"""Kernel-regression classification: quick profiles end to end (SimRF and DERF protocols), the
vectorised scorer against brute force (also at an extreme scale), and a published number."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error
from scipy.special import logsumexp
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.datasets import available
from rfbench.compute.experiments import ConfigError, get_experiment
from rfbench.compute.experiments.classify.data import prepared
from rfbench.compute.experiments.classify.experiment import Classify
from rfbench.compute.experiments.classify.kernel_regression import exact_accuracy, rf_accuracies
from rfbench.compute.features import registry
from rfbench.compute.kernels import gaussian_kernel
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, resolve_file, run
from rfbench.compute.runner.config import read_config_file
from rfbench.present.summaries.classify import paper_table
from rfbench.present.summaries.classify import summary as classify_summary

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.fixture(autouse=True)
def _data_env(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(data_dir))


def _need(*names: str) -> None:
    absent = [n for n in names if not available(n)]
    if absent:
        pytest.skip(f"data set(s) {absent} not available locally")


def _run_file(path: Path, out: Path):
    cfg = read_config_file(path)
    exp = Classify()
    config = exp.resolve_config(cfg.params_for("quick"), "quick", name=cfg.name, figure=cfg.figure)
    return config, load_results(run(exp, config, RunOptions(out=out, backend="serial", quiet=True)))


def test_registered() -> None:
    assert isinstance(get_experiment("classify"), Classify)


@pytest.mark.slow
def test_quick_simrf_fig8(tmp_path: Path) -> None:
    _need("banknote", "cmc")
    config, res = _run_file(CONFIGS / "simrf" / "fig8.toml", tmp_path / "fig8.parquet")
    assert set(res["figure"]) == {"simrf-fig8"} and set(res["experiment"]) == {"classify"}
    acc = res[res["metric"] == "accuracy"]
    assert acc["value"].between(0, 1).all() and np.isfinite(acc["value"]).all()
    rf = acc[acc["estimator"] != "exact"]
    assert len(rf) == len(config["dataset"]) * len(config["estimators"]) * len(config["m"])
    assert rf.groupby(["dataset", "estimator", "m"]).size().eq(1).all()
    assert (rf["n_trials"] == config["trials"]).all() and np.isfinite(rf["stderr"]).all()
    assert np.allclose(rf["m"], rf["m_per_d"] * rf["d"])
    exact = acc[acc["estimator"] == "exact"].set_index("dataset")
    assert set(exact.index) == set(config["dataset"])
    assert (res[res["metric"] == "v_mean"]["value"] > 0).all()
    # the exact kernel is the ceiling the random features tend to (SimRF Fig. 8)
    for name, sub in rf.groupby("dataset"):
        assert sub["value"].max() <= exact.loc[name, "value"] + 0.05
    summary = classify_summary(res)
    assert 1 <= len(summary) <= 15 and "exact" in summary.columns


@pytest.mark.slow
def test_quick_derf_fig3(tmp_path: Path) -> None:
    _need("banknote", "cmc")
    config, res = _run_file(CONFIGS / "derf" / "fig3.toml", tmp_path / "fig3.parquet")
    assert set(res["figure"]) == {"derf-fig3"}
    val, test = res[res["metric"] == "val_accuracy"], res[res["metric"] == "accuracy"]
    points = len(config["dataset"]) * (len(config["estimators"]) * len(config["budget"]) + 1)
    assert len(test) == points and len(val) == points * len(config["sigma"])
    assert res["value"].between(0, 1).all()
    for key, sub in val.groupby(["dataset", "estimator", "budget"], dropna=False):
        chosen = test.set_index(["dataset", "estimator", "budget"]).loc[key]
        best = sub.loc[sub["value"].idxmax(), "sigma"]  # the first best σ on validation
        assert chosen["sigma"] == best, key
    # sequential (stop = resolved): every row at the cap, or an arm whose comparison settled
    # before the cell's last says so and drew fewer (the validation draws at least)
    drawn = test[test["estimator"] != "exact"]
    early = drawn["n_trials"] < config["trials"]
    assert drawn["n_trials"].between(config["val_trials"], config["trials"]).all()
    assert (drawn.loc[early, "stop"] == "resolved").all()
    assert (
        drawn.loc[drawn["estimator"] == config["compare"], "n_trials"] == config["trials"]
    ).any()
    # a feature budget: every method has F features, the [sin, cos] map F/2 projections
    rf = test[test["estimator"] != "exact"]
    assert config["m"] == [] and (rf["features"] == rf["budget"]).all()
    trig = rf[rf["estimator"] == "trig@orf"]
    assert set(trig["m"]) == {f // 2 for f in config["budget"]}
    summary = classify_summary(res)
    assert "sderf−gerf" in summary.columns and summary["dataset"].iloc[-1] == "mean"


def _brute_force_accuracy(est, draw, Xtr, Y, Xq, yq) -> np.ndarray:
    """Accuracy per draw from log-domain dense features (no shortcut): score_c = Σ_i K̂ y_ic."""
    q, k = est.query_log_features(draw, Xq), est.key_log_features(draw, Xtr)
    assert np.isrealobj(q.values) and (q.values >= 0).all()
    with np.errstate(divide="ignore"):  # -inf for features that underflowed to 0
        lq = np.log(q.values) + q.log_scale[..., None]  # (draws, Nq, F)
        lk = np.log(k.values) + k.log_scale[..., None]
    log_k_hat = logsumexp(lq[:, :, None, :] + lk[:, None, :, :], axis=-1)  # (draws, Nq, N)
    scores = np.stack(
        [logsumexp(np.where(Y[:, c] > 0, log_k_hat, -np.inf), axis=-1) for c in range(Y.shape[1])],
        axis=-1,
    )
    return np.mean(np.argmax(scores, axis=-1) == yq, axis=-1)


@pytest.mark.parametrize(
    ("name", "sigma"),
    [("positive@simrf", 0.35), ("sderf@orf", 0.35), ("aderf@orf", 0.35), ("positive@iid", 60.0)],
)
def test_scorer_matches_brute_force(name: str, sigma: float) -> None:
    """The merged-draw, column-shifted scorer equals the per-draw log-domain computation; at
    σ = 60 the training rows' log-scales spread over thousands (float32 would underflow)."""
    data = prepared("wine", "simrf", 42, False)
    Xtr, Xq, yq = sigma * data.train.X, sigma * data.test.X, data.test.y
    rng = np.random.default_rng(7)
    est = registry.get(name, kernel="gaussian", m=2 * data.d)
    fit = (Xq, Xtr) if est.component.data_dependent else None
    draw = est.sample(rng, data.d, draws=6, fit=fit)
    spread = np.ptp(est.key_log_features(draw, Xtr).log_scale)
    assert (spread > 300) == (sigma > 10)
    ours = rf_accuracies(est, draw.projections["omega"], draw.params, Xtr, data.Y, Xq, yq)
    brute = _brute_force_accuracy(est, draw, Xtr, data.Y, Xq, yq)
    np.testing.assert_array_equal(ours, brute)
    assert ours.std() > 0 or sigma > 10  # draws differ: the comparison is not vacuous


@pytest.mark.parametrize("name", ["positive@orf", "sderf@orf"])
def test_exponent_floor_changes_no_accuracy(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """At σ = 200 most float64 exponents lie below the floor (where exp takes its slow path):
    flooring them at EXP_FLOOR gives the accuracies of the unfloored computation, draw by draw."""
    from rfbench.compute.experiments.classify import kernel_regression as kr

    data = prepared("wine", "simrf", 42, False)
    Xtr, Xq, yq = 200 * data.train.X, 200 * data.test.X, data.test.y
    est = registry.get(name, kernel="gaussian", m=2 * data.d)
    fit = (Xq, Xtr) if est.component.data_dependent else None
    draw = est.sample(np.random.default_rng(5), data.d, draws=8, fit=fit)
    args = (est, draw.projections["omega"], draw.params, Xtr, data.Y, Xq, yq)
    lowest = []
    real_exp = kr._exp_inplace

    def spy(a: np.ndarray) -> None:
        lowest.append(float(a.min()))
        real_exp(a)

    monkeypatch.setattr(kr, "_exp_inplace", spy)
    floored = rf_accuracies(*args, dtype=np.float64)
    assert min(lowest) < kr.EXP_FLOOR[np.dtype(np.float64)]  # the floor is exercised
    monkeypatch.setattr(kr, "EXP_FLOOR", {})
    np.testing.assert_array_equal(floored, rf_accuracies(*args, dtype=np.float64))


def test_exact_accuracy_and_trig() -> None:
    """Exact scores against a dense kernel; trig (sign-indefinite) scored like brute force."""
    data = prepared("wine", "simrf", 42, False)
    Xtr, Xq, yq = 0.35 * data.train.X, 0.35 * data.test.X, data.test.y
    dense = np.argmax(gaussian_kernel(Xq, Xtr) @ data.Y, axis=1)
    assert exact_accuracy("gaussian", Xtr, data.Y, Xq, yq) == np.mean(dense == yq)
    est = registry.get("trig@orf", kernel="gaussian", m=13)
    draw = est.sample(np.random.default_rng(3), data.d, draws=5)
    k_hat = est.estimate(draw, Xq, Xtr)
    brute = np.mean(np.argmax(k_hat @ data.Y, axis=-1) == yq, axis=-1)
    ours = rf_accuracies(est, draw.projections["omega"], {}, Xtr, data.Y, Xq, yq)
    np.testing.assert_allclose(ours, brute, atol=1.5 / len(yq))  # at most one near-tie flip


def test_published_table3_banknote(tmp_path: Path, real_data_dir: Path) -> None:
    """SimRF Table 3, banknote (d′ = m = 4): IIDRF 0.6441 ± 0.0024, SimRF 0.7196 ± 0.0019.
    Tolerance 5·√(se² + se_paper²), smaller than the IID-SimRF gap the table shows."""
    _need("banknote")
    exp = Classify()
    config = exp.check_config(
        {"dataset": ["banknote"], "estimators": ["positive@iid", "positive@simrf"], "m": [1],
         "pad": True, "trials": 300, "exact": False}
    )  # fmt: skip
    res = load_results(
        run(exp, config, RunOptions(out=tmp_path / "t3.parquet", backend="serial", quiet=True))
    )
    table3 = paper_table("simrf-table3")["banknote"]
    gap = table3["positive@simrf"][0] - table3["positive@iid"][0]
    for _, row in res.iterrows():
        ref, ref_se = table3[row["estimator"]]
        tol = 5 * math.hypot(row["stderr"], ref_se)
        assert tol < gap
        assert abs(row["value"] - ref) < tol, (row["estimator"], row["value"], ref)


@pytest.mark.parametrize(
    "bad",
    [{"dataset": ["no-such-set"]}, {"tune": True},
     {"estimators": ["angular-hybrid@iid"]}, {"estimators": ["nope@iid"]},
     {"sigma": [0.0, 1.0]}, {"protocol": "kfold"}, {"subset": [10]}, {"fit": "test"}],
)  # fmt: skip
def test_bad_config(bad: dict) -> None:
    with pytest.raises(ConfigError):
        Classify().check_config(bad)


def test_an_estimator_without_projection_terms_is_refused_by_name() -> None:
    """Classify asks the estimator for per-projection log terms (registry.describe's
    ``projection_terms``); a hybrid lacks them and is refused in one line naming both."""
    assert registry.describe("trig@orf").estimator.projection_terms
    assert not registry.describe("angular-hybrid@iid").estimator.projection_terms
    with pytest.raises(ConfigError, match="'angular-hybrid@iid' lacks per-projection log terms"):
        Classify().check_config({"estimators": ["angular-hybrid@iid"]})


def test_job_cost_ranks_the_paper_grid_for_longest_first() -> None:
    """The cost estimate orders jobs as their work does (training rows × features × draws): the
    largest data set at the largest M first, a σ search above a single σ."""
    exp = Classify()
    config = exp.resolve_config({"dataset": ["banknote", "chess"], "m": [16, 128]}, "paper")
    specs = exp.grid(config)
    costs = {(s["dataset"], s["estimator"], s.get("m")): exp.job_cost(s) for s in specs}
    assert costs["chess", "positive@orf", 128] > costs["chess", "positive@orf", 16]
    assert costs["chess", "positive@orf", 16] > costs["banknote", "positive@orf", 16]
    tuned = exp.resolve_config(
        {"dataset": ["banknote"], "protocol": "derf", "tune": True, "sigma": [0.1, 1.0]}, "paper"
    )
    spec = next(s for s in exp.grid(tuned) if s["estimator"] != "exact")
    assert exp.job_cost(spec) > exp.job_cost(spec.replace(val_trials=1))


# ---------------------------------------------------------------- feature budget (issue 27 item 4)

#: a small budget run: wine, two maps of 2 and 1 features per projection, one σ, few draws
SMALL = {"dataset": ["wine"], "estimators": ["trig@orf", "positive@orf"], "trials": 6,
         "exact": False}  # fmt: skip


def _notices(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "rfbench.params"]


def test_a_budget_run_gives_each_map_its_features_and_the_rows_say_so(tmp_path: Path) -> None:
    """At budget F the [sin, cos] map gets ⌈F/2⌉ projections and positive F; the rows carry
    budget, m and features; each job equals the m job at those projections, draw for draw."""
    exp = Classify()
    config = exp.resolve_config({**SMALL, "budget": [8, 13]})
    assert config["m"] == []
    out = run(exp, config, RunOptions(out=tmp_path / "b.parquet", backend="serial", quiet=True))
    rows = load_results(out).set_index(["estimator", "budget"])
    assert rows.loc[("trig@orf", 8), "m"] == 4 and rows.loc[("trig@orf", 13), "m"] == 7
    assert rows.loc[("positive@orf", 8), "m"] == 8 and rows.loc[("positive@orf", 13), "m"] == 13
    assert list(rows["features"]) == [8, 14, 8, 13]  # ⌈13/2⌉ = 7 [sin, cos] pairs: 14
    m_run = exp.resolve_config({**SMALL, "m": [4, 8], "m_per_d": False})
    by_m = {(s["estimator"], s["m"]): s for s in exp.grid(m_run)}
    for spec in exp.grid(config):
        if spec["budget"] != 8:
            continue
        (row,) = exp.run_job(spec, np.random.default_rng(1))
        twin = by_m[spec["estimator"], row["m"]]
        (same,) = exp.run_job(twin, np.random.default_rng(1))
        assert row["budget"] == 8 and "budget" not in same
        assert (row["value"], row["stderr"]) == (same["value"], same["stderr"])


def test_the_deprecated_count_features_is_the_budget_with_a_one_line_notice(caplog) -> None:
    exp = Classify()
    with caplog.at_level(logging.WARNING, logger="rfbench.params"):
        old = exp.resolve_config({**SMALL, "m": [8, 13], "m_per_d": False, "count_features": True})
    (notice,) = _notices(caplog)
    assert "'count_features' = true with 'm' = [8, 13]" in notice and "'budget' = [8, 13]" in notice
    assert "until the next release" in notice and "\n" not in notice
    new = exp.resolve_config({**SMALL, "budget": [8, 13]})
    assert old["budget"] == [8, 13] and old["m"] == [] and not old["count_features"]
    assert exp.grid(old) == exp.grid(new)  # the same jobs: the same seeds, the same rows


def test_a_budget_replaces_the_m_of_the_quick_profile_but_not_a_given_m(tmp_path: Path) -> None:
    exp = Classify()
    assert "m" in exp.profiles["quick"]
    quick = exp.resolve_config({"budget": [16]}, "quick")
    assert quick["m"] == [] and quick["profile"] == "quick"
    assert quick["trials"] == exp.profiles["quick"]["trials"]  # the rest of the profile holds
    both = tmp_path / "both.toml"
    both.write_text('experiment = "classify"\n[params]\nbudget = [16]\n[profiles.quick]\nm = [2]\n')
    with pytest.raises(ConfigError, match="both 'm' .projections. and 'budget' .features."):
        resolve_file(both, "quick")
    assert resolve_file(both, "paper")[1]["budget"] == [16]


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ({"budget": [16], "m": [4]}, "both 'm' (projections) and 'budget' (features)"),
        ({"budget": [16], "count_features": True}, "both 'budget' and its old form"),
        ({"m": [16], "count_features": True}, "(m·d features) has no budget form"),
        ({"m": []}, "invalid value for 'm': []"),
        ({"budget": [0]}, "invalid value for 'budget'"),
        ({"budget": [16], "stream": "released", "estimators": ["positive@orf"]},
         "invalid value for 'budget': [16]"),
    ],
)  # fmt: skip
def test_a_bad_size_is_one_config_error(bad: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        Classify().resolve_config(bad)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_the_command_line_takes_budget_and_count_features_and_refuses_both(
    tmp_path: Path, caplog
) -> None:
    common = ["classify", "--dataset", "wine", "--estimators", "trig@orf", "--trials", "3",
              "--no-exact", "--quiet", "--no-plot", "--backend", "serial"]  # fmt: skip
    both = CliRunner().invoke(app, [*common, "--budget", "16", "--m", "16"])
    one_line_error(both, "both 'm' (projections) and 'budget' (features)")
    runs = {}
    for name, size in (("new", ["--budget", "16"]),
                       ("old", ["--m", "16", "--no-m-per-d", "--count-features"])):  # fmt: skip
        out = tmp_path / f"{name}.parquet"
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="rfbench.params"):
            done = CliRunner().invoke(app, [*common, *size, "--out", str(out)])
        assert done.exit_code == 0, done.output
        assert len(_notices(caplog)) == (name == "old")
        runs[name] = load_results(out)
    assert list(runs["new"][["budget", "m", "features"]].iloc[0]) == [16, 8, 16]
    columns = ["estimator", "budget", "m", "features", "sigma", "value", "stderr"]
    assert runs["old"][columns].equals(runs["new"][columns])
    help_text = " ".join(CliRunner().invoke(app, ["classify", "--help"]).output.split())
    assert "--budgets, --budget INT[,INT...]" in help_text


def test_summary_of_a_budget_run_shows_every_map() -> None:
    """At one feature budget F a [sin, cos] map has half the projections of a positive map: the
    summary's table is at the smallest F (not the smallest m, which would show trig alone)."""
    rows = [
        {"dataset": "cmc", "estimator": est, "m": m, "budget": f, "metric": "accuracy",
         "value": 0.5, "sigma": 1.0, "note": None}
        for f in (16, 32)
        for est, m in (("trig@orf", f // 2), ("positive@orf", f))
    ]  # fmt: skip
    summary = classify_summary(pd.DataFrame(rows))
    assert {"trig@orf", "positive@orf"} <= set(summary.columns)
