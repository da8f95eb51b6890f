"""``@fitted``: Gaussian rows with a fitted covariance and importance weights p/q, against Monte
Carlo: unbiased, and the MSE of positive features equal to its closed form."""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.features import registry, theory
from rfbench.compute.features.weights.fitted import fitted_covariance

D = 4


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Anisotropic fit data (Σ far from I: eigenvalues about 1.2 to 5) and a pair in it."""
    rng = np.random.default_rng(0)
    scale = np.array([1.4, 0.8, 0.4, 0.2])
    X, Y = rng.standard_normal((50, D)) * scale, rng.standard_normal((60, D)) * scale
    return X, Y, X[0], Y[0]


def test_the_covariance_is_at_least_the_identity_and_anisotropic() -> None:
    X, Y, _, _ = _data()
    lam = np.linalg.eigvalsh(fitted_covariance(X, Y))
    assert lam.min() >= 1.0 and lam.max() > 3.0  # 2I − Σ⁻¹ ≻ 0: finite variance


@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
def test_positive_fitted_is_unbiased_with_the_closed_form_mse(kernel) -> None:
    """20,000 draws of m = 8: |mean − K| < 5 SE with 5 SE < K/2 (a missing or doubled
    importance weight moves the mean by far more), and the empirical MSE within 5 of its
    standard errors of the closed form with 5 SE < MSE/2 (a factor-2 error fails)."""
    X, Y, x, y = _data()
    est = registry.get("positive@fitted", kernel=kernel, m=8)
    assert est.unbiased and theory.has_theory("positive@fitted")
    draws = 20_000
    draw = est.sample(np.random.default_rng(1), D, draws=draws, fit=(X, Y))
    k = est.estimate(draw, x[None], y[None])[:, 0, 0]
    true = float(np.exp(x @ y + (-0.5 if kernel == "gaussian" else 0.0) * (x @ x + y @ y)))
    mse = float(theory.mse(est, x, y, params=draw.params))
    se = np.sqrt(mse / draws)
    assert 5 * se < 0.5 * true
    assert abs(k.mean() - true) < 5 * se
    sq = (k - true) ** 2
    se_mse = sq.std(ddof=1) / np.sqrt(draws)
    assert 5 * se_mse < 0.5 * mse
    assert abs(sq.mean() - mse) < 5 * se_mse, sq.mean() / mse


def test_importance_weights_matter() -> None:
    """Without p/q the same rows estimate another kernel: the weights are what keeps it unbiased
    (the test above would catch their loss)."""
    X, Y, x, y = _data()
    est = registry.get("positive@fitted", m=8)
    draw = est.sample(np.random.default_rng(1), D, draws=4_000, fit=(X, Y))
    proj = draw.projections["omega"]
    z = proj.W @ (x + y)
    unweighted = np.mean(np.exp(z - 0.5 * (x @ x + y @ y)))
    assert abs(unweighted / np.exp(x @ y) - 1) > 0.2


def test_hybrids_refuse_a_fitted_coupling() -> None:
    assert "angular-hybrid@fitted" not in registry.estimator_names()
    assert "positive@fitted" in registry.estimator_names()
    with pytest.raises(registry.UnknownEstimatorError, match="fitted to data"):
        registry.get("angular-hybrid@fitted")
    d = registry.describe("positive@fitted").estimator
    assert d.data_dependent and d.unbiased
    with pytest.raises(ValueError, match="fit"):
        registry.get("positive@fitted").sample(np.random.default_rng(0), D)


def test_weighted_rows_have_the_moments_of_n_0_i() -> None:
    """E_q[(p/q) ω] = 0 and E_q[(p/q) ωωᵀ] = I (the weights are bounded by |Σ|^{1/2} since Σ ⪰ I):
    every entry within 5 empirical SEs, each SE below 0.05, so a factor-2 error cannot pass."""
    X, Y, _, _ = _data()
    w = registry.make_weights("fitted").fitted(X, Y)
    p = w.sample(np.random.default_rng(3), D, 8, 5_000)
    a = (p.weights * p.count).reshape(-1)  # p/q per row
    W = p.W.reshape(-1, D)
    assert a.max() <= np.sqrt(np.linalg.det(w.cov)) * (1 + 1e-12)
    first = a[:, None] * W
    second = (a[:, None, None] * W[:, :, None] * W[:, None, :]).reshape(len(a), -1)
    for terms, want in ((first, np.zeros(D)), (second, np.eye(D).ravel())):
        se = terms.std(axis=0, ddof=1) / np.sqrt(len(a))
        assert se.max() < 0.05
        assert np.all(np.abs(terms.mean(axis=0) - want) < 5 * se)
