"""Gram on a registry data set (VRC kernel estimation) and the rank-r bound beside it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rfbench.compute.experiments import ConfigError
from rfbench.compute.experiments.gram.experiment import (
    _tail_energy,
    dataset_points,
    lengthscale_rule,
)
from rfbench.compute.kernels import kernel_matrix
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run


def test_dataset_points_are_a_seeded_z_scored_sample() -> None:
    from rfbench.compute.datasets import load

    full = load("wine").X
    Z = dataset_points("wine", 50, seed=3)
    assert Z.shape == (50, full.shape[1])
    again = dataset_points("wine", 50, seed=3)
    assert np.array_equal(Z, again) and not np.array_equal(Z, dataset_points("wine", 50, 4))
    whole = dataset_points("wine", 10_000, seed=0)  # every row: exactly z-scored
    assert whole.shape == full.shape
    assert np.allclose(whole.mean(0), 0, atol=1e-12) and np.allclose(whole.std(0), 1)


def test_lengthscale_rule_is_half_the_inverse_mean_distance() -> None:
    Z = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 4.0]])  # distances 5, 4, 3: mean 4
    assert lengthscale_rule(Z) == pytest.approx(1 / 8)


@pytest.mark.parametrize("shape", [(12, 12), (9, 14)])
def test_the_oracle_is_the_truncated_svd_error(shape) -> None:
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(shape[0], 3)) * 0.5, rng.normal(size=(shape[1], 3)) * 0.5
    K = kernel_matrix("gaussian", X, X if shape[0] == shape[1] else Y)
    U, s, Vt = np.linalg.svd(K)
    for r in (1, 3, 6):
        best = (U[:, :r] * s[:r]) @ Vt[:r]
        assert _tail_energy(K, r) == pytest.approx(np.sum((K - best) ** 2), rel=1e-9)
    assert _tail_energy(K, 0) == pytest.approx(np.sum(K**2))


def test_the_oracle_computes_a_matrix_spectrum_once_with_the_values_of_a_fresh_one() -> None:
    """The singular values are memoised on the matrix's content: a repeat (another estimator of
    the same cell) reuses them, bit for bit what eigvalsh/svd give, and a changed matrix is not
    served a stale spectrum."""
    from rfbench.compute.experiments.gram.experiment import _singular_values

    rng = np.random.default_rng(1)
    X = rng.normal(size=(16, 3)) * 0.5
    for K in (kernel_matrix("gaussian", X, X), kernel_matrix("gaussian", X, X[:11])):
        sym = K.shape[0] == K.shape[1]
        fresh = np.abs(np.linalg.eigvalsh(K)) if sym else np.linalg.svd(K, compute_uv=False)
        fresh = np.sort(fresh)[::-1]
        _singular_values.cache_clear()
        for r in (1, 4, 1):
            assert _tail_energy(K, r) == float(np.sum(fresh[r:] ** 2))  # exactly
        assert _singular_values.cache_info().misses == 1
        changed = K.copy()
        changed[0, 0] += 0.5
        assert _tail_energy(changed, 4) != _tail_energy(K, 4)
        assert _singular_values.cache_info().misses == 2


def test_a_run_on_a_data_set_has_the_bound_and_the_closed_form(tmp_path: Path) -> None:
    config = {
        "inputs": "dataset", "dataset": ["wine"], "n_points": 40, "m_per_d": [1.0],
        "sigma": [0.0], "kernels": ["gaussian"], "reps": 300,
        "estimators": ["trig@iid", "trig@pnc", "nystrom"],
    }  # fmt: skip
    out = run("gram", config, RunOptions(out=tmp_path / "g.parquet", backend="serial", quiet=True))
    rows = load_results(out)
    assert set(rows["m"]) == {13} and set(rows["dataset"]) == {"wine"}
    scale = rows["input_scale"].dropna().unique()
    assert len(scale) == 1 and scale[0] == pytest.approx(
        lengthscale_rule(dataset_points("wine", 40, 0))
    )
    per = rows.set_index(["estimator", "metric"])["value"]
    for est in ("trig@iid", "trig@pnc", "nystrom"):  # no estimator beats the best rank-r matrix
        assert per[(est, "frob_sq_per_entry")] > per[(est, "oracle_frob_sq_per_entry")]
    emp, se = (
        per[("trig@pnc", "frob_sq_per_entry")],
        rows.set_index(["estimator", "metric"])["stderr"][("trig@pnc", "frob_sq_per_entry")],
    )
    assert abs(emp - per[("trig@pnc", "theory_frob_sq_per_entry")]) < 5 * se
    feats = rows.set_index(["estimator", "metric"])["features"]
    assert feats[("trig@iid", "frob_sq_per_entry")] == 26  # [sin, cos]: 2m
    assert feats[("nystrom", "frob_sq_per_entry")] == 13


def test_dataset_inputs_need_a_data_set() -> None:
    from rfbench.compute.experiments import get_experiment

    with pytest.raises(ConfigError, match="exactly when inputs = dataset"):
        get_experiment("gram").check_config({"inputs": "dataset"})
    with pytest.raises(ConfigError, match="exactly when inputs = dataset"):
        get_experiment("gram").check_config({"dataset": ["wine"]})
