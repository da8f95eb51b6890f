"""The gram experiment: SimRF Fig. 7 and the Spectraformer grid, quick profiles end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.experiments import ConfigError, get_experiment
from rfbench.compute.experiments.gram.experiment import expand_estimators, make_inputs
from rfbench.compute.features import registry
from rfbench.compute.features.theory import coupled
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, load_config, run
from rfbench.present.summaries import terminal_summary

#: every registered component (feature function) name
COMPONENTS = {d.component for d in registry.list_estimators() if d.estimator.kind == "component"}

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
FIG7_REPS = 500


def _run(config_file: str, tmp_path: Path, **overrides) -> pd.DataFrame:
    config = {**load_config(CONFIGS / config_file, profile="quick"), **overrides}
    out = run(
        "gram",
        config,
        RunOptions(seed=0, out=tmp_path / "out.parquet", backend="serial", quiet=True),
    )
    return load_results(out)  # validates the schema


@pytest.fixture(scope="module")
def fig7(tmp_path_factory) -> pd.DataFrame:
    # 500 draws: the per-draw errors of SimRF are heavy-tailed (sd/mean up to ~2), so the
    # power check 5 SE < expected/2 below needs more than the quick profile's 200
    return _run("simrf/fig7.toml", tmp_path_factory.mktemp("fig7"), reps=FIG7_REPS)


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> pd.DataFrame:
    return _run("spectraformer/grid.toml", tmp_path_factory.mktemp("grid"))


@pytest.mark.slow
def test_fig7_rows(fig7) -> None:
    assert set(fig7["figure"]) == {"simrf-fig7"}
    assert not fig7["value"].isna().any() and (fig7["value"] >= 0).all()
    assert set(fig7["kernel"]) == {"gaussian"} and set(fig7["sigma"]) == {0.1}
    couplings = ["iid", "orf", "simrf", "simrf-plus"]
    for weights in couplings:
        for m in (64, 128):
            cell = fig7[(fig7["estimator"] == f"positive@{weights}") & (fig7["m"] == m)]
            metrics = set(cell["metric"])
            assert {"frob_sq", "frob_sq_per_entry", "rel_frob"} <= metrics
            assert ("theory_frob_sq_per_entry" in metrics) == (weights != "simrf-plus")
            mc = cell.set_index("metric").loc["frob_sq"]
            assert mc["n_trials"] == FIG7_REPS
            per_entry = cell.set_index("metric").loc["frob_sq_per_entry", "value"]
            assert per_entry == pytest.approx(mc["value"] / 64**2)


@pytest.mark.slow
def test_fig7_matches_the_closed_form(fig7) -> None:
    """E Σ(K - K̂)² = Σ_ij MSE(x_i, x_j) (SimRF Sec. 5.2, Fig. 7; docs/experiments.md#simrf-fig7),
    within 5 standard errors."""
    rows = fig7.set_index(["estimator", "m", "metric"])["value"]
    errs = fig7.set_index(["estimator", "m", "metric"])["stderr"]
    for weights in ("iid", "orf", "simrf"):
        for m in (64, 128):
            name = f"positive@{weights}"
            mc, se = rows[name, m, "frob_sq_per_entry"], errs[name, m, "frob_sq_per_entry"]
            expected = rows[name, m, "theory_frob_sq_per_entry"]
            assert 5 * se < 0.5 * expected  # a factor-2 error would be caught
            assert abs(mc - expected) < 5 * se, (name, m, mc, expected, se)
    # the reference numbers of SimRF Sec. 5.2, Fig. 7; docs/experiments.md#simrf-fig7 (m = d,
    # expected error / d²) and the ordering
    theory = {
        w: rows[f"positive@{w}", 64, "theory_frob_sq_per_entry"] for w in ("iid", "orf", "simrf")
    }
    assert theory["iid"] == pytest.approx(0.0150, abs=8e-4)
    assert theory["orf"] == pytest.approx(0.0109, abs=6e-4)
    assert theory["simrf"] == pytest.approx(0.0050, abs=6e-4)
    assert theory["simrf"] < theory["orf"] < theory["iid"]
    # m = n d: the expected error scales exactly as 1/n (SimRF Sec. 3; docs/methods.md#stacking)
    for w in ("iid", "orf", "simrf"):
        assert rows[f"positive@{w}", 128, "theory_frob_sq"] == pytest.approx(
            rows[f"positive@{w}", 64, "theory_frob_sq"] / 2, rel=1e-9
        )


def test_fig7_theory_is_the_sum_of_pointwise_mse() -> None:
    spec = {"inputs": "self", "d": 64, "n_points": 64, "sigma": 0.1, "data_seed": 0}
    X, Y = make_inputs(spec)
    assert X is Y and X.std() == pytest.approx(0.1, rel=0.05)
    direct = coupled.gram_frobenius_expectation("simrf", X, 64)
    exp = get_experiment("gram")
    rows = exp.run_job(
        exp.grid(exp.resolve_config({"estimators": ["positive@simrf"], "m": [64], "reps": 2}))[0],
        np.random.default_rng(0),
    )
    got = next(r["value"] for r in rows if r["metric"] == "theory_frob_sq")
    assert got == pytest.approx(direct, rel=1e-10)


@pytest.mark.slow
def test_grid_covers_every_component_and_weights(grid) -> None:
    assert set(grid["figure"]) == {"spectraformer-grid"}
    names = set(grid["estimator"])
    comps = {n.split("@")[0] for n in names}
    weights = {n.split("@")[1] for n in names}
    assert comps == COMPONENTS and weights == set(registry.weights_samplers())
    assert not grid["value"].isna().any()
    skipped = grid[grid["metric"] == "skipped"]
    assert set(skipped["estimator"]) == {"sign@iid"}  # the angular-kernel component
    assert skipped["note"].str.contains("angular").all()
    assert set(skipped["kernel"]) == {"softmax", "gaussian"}
    ran = grid[grid["metric"] != "skipped"]
    for (name, kernel), cell in ran.groupby(["estimator", "kernel"]):
        assert {"rel_frob", "attn_rel_frob", "frob_sq"} <= set(cell["metric"]), (name, kernel)
    assert (ran["value"] >= 0).all()
    # the deterministic sparse grid: 2d + 1 nodes, identical draws (zero spread)
    sgq = ran[ran["estimator"] == "positive@sgq"]
    assert set(sgq["projections"]) == {2 * 8 + 1}
    assert sgq.loc[sgq["metric"] == "rel_frob", "stderr"].max() < 1e-12


def test_grid_inputs_follow_the_spec() -> None:
    spec = {"inputs": "attention", "d": 32, "n_points": 4000, "r": 1.5, "data_seed": 3}
    Q, K = make_inputs(spec)
    assert Q.shape == K.shape == (4000, 32) and not np.allclose(Q, K)
    # q ~ N(0, r²I/d): mean squared norm r² (sd of the mean 1.5²·sqrt(2/32)/sqrt(4000))
    assert np.mean(np.sum(Q**2, axis=1)) == pytest.approx(1.5**2, abs=5 * 2.25 * 0.25 / 63)
    np.testing.assert_array_equal(make_inputs(spec)[0], Q)  # fixed by data_seed


def test_wildcards_and_bad_configs() -> None:
    assert expand_estimators(["positive@orf", "positive@*"])[0] == "positive@orf"
    assert len(expand_estimators(["*@*"])) == len(COMPONENTS) * len(registry.weights_samplers())
    exp = get_experiment("gram")
    for bad in (
        {"inputs": "pairs"},
        {"estimators": ["nope@iid"]},
        {"estimators": ["zzz*"]},
        {"kernels": ["laplace"]},
        {"m": [0]},
        {"reps": 1},
        {"sigma": [-0.1]},
    ):
        with pytest.raises(ConfigError):
            exp.resolve_config(bad)


@pytest.mark.slow
def test_summary_has_headline_rows(fig7, grid) -> None:
    exp = get_experiment("gram")
    top = terminal_summary(exp.name, fig7)
    assert 0 < len(top) <= 15 and set(top["m"]) == {64}
    for _, cell in top.groupby(["kernel", "metric"]):  # 1 = smallest error of the cell
        ranks = cell["rank"].astype(int)
        assert sorted(ranks) == list(range(1, len(cell) + 1))
        assert cell.loc[ranks.idxmin(), "value"] == cell["value"].min()
    top = terminal_summary(exp.name, grid)
    assert set(top["rank"]) == {"best", "worst"} and len(top) <= 15
