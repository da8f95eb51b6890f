"""``taylor2`` and ``maclaurin`` (docs/methods.md#taylor2, #maclaurin): exact algebra of the Taylor
map and its exact MSE; unbiasedness and closed-form variance of random Maclaurin features."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rfbench.compute.features import registry, theory
from rfbench.compute.features.polynomial import taylor2_features
from rfbench.compute.features.theory.polynomial import maclaurin_second_moment, taylor2_residual
from rfbench.compute.kernels import kernel_matrix


def test_taylor2_features_have_the_documented_width_and_inner_product():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(2, 7, 5))
    phi, psi = taylor2_features(X), taylor2_features(Y)
    assert phi.shape == (7, 1 + 5 + 5 * 6 // 2)
    t = X @ Y.T
    np.testing.assert_allclose(phi @ psi.T, 1 + t + t**2 / 2, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
def test_taylor2_is_deterministic_and_its_mse_is_the_squared_bias(kernel):
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(2, 4, 3)) * 0.7
    est = registry.get("taylor2", kernel=kernel)
    assert est.deterministic and not est.unbiased
    draw = est.sample(rng, d=3, draws=3)
    K_hat = est.estimate(draw, X, Y)
    assert K_hat.shape == (3, 4, 4) and np.all(K_hat[0] == K_hat[1])
    K = kernel_matrix(kernel, X, Y)
    bias = K_hat[0] - K
    mse = theory.mse(est, X[:, None, :], Y[None, :, :])
    np.testing.assert_allclose(bias**2, mse, rtol=1e-8)
    assert np.all(mse > 0)
    np.testing.assert_allclose(
        est.query_features(draw, X)[0] @ est.key_features(draw, Y)[0].T, K_hat[0], rtol=1e-12
    )


def test_taylor2_residual_has_no_cancellation():
    t = np.array([1e-4, -0.3, 0.49, 0.51, 2.0])
    expected = [sum(v**k / math.factorial(k) for k in range(3, 40)) for v in t]
    np.testing.assert_allclose(taylor2_residual(t), expected, rtol=1e-12)


PAIRS = {
    # generic position
    "generic": (np.array([0.3, -0.4, 0.5, 0.1]), np.array([0.2, 0.6, 0.3, -0.3])),
    # axis aligned: the Rademacher 4th-moment correction −2Σx_i²y_i² is as large as it gets
    "aligned": (np.array([0.9, 0.0, 0.0, 0.0]), np.array([0.8, 0.0, 0.0, 0.0])),
}


@pytest.mark.parametrize("ratio", [0.5, 0.3])
@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
@pytest.mark.parametrize("where", sorted(PAIRS))
def test_maclaurin_is_unbiased_with_the_closed_form_variance(where, kernel, ratio):
    x, y = PAIRS[where]
    m, draws = 4, 40_000
    est = registry.get("maclaurin", kernel=kernel, m=m, ratio=ratio)
    draw = est.sample(np.random.default_rng(2), d=4, draws=draws)
    k = est.estimate(draw, x[None], y[None])[:, 0, 0]
    true = float(kernel_matrix(kernel, x[None], y[None])[0, 0])
    se = k.std(ddof=1) / np.sqrt(draws)
    assert 5 * se < 0.5 * true
    assert abs(k.mean() - true) < 5 * se
    var = k.var(ddof=1)
    se_var = np.sqrt((np.mean((k - k.mean()) ** 4) - var**2) / draws)
    closed = float(theory.mse(est, x, y))
    assert 5 * se_var < 0.5 * closed
    assert abs(var - closed) < 5 * se_var, f"Var/theory = {var / closed:.3f}"


def test_maclaurin_variance_uses_the_rademacher_fourth_moment():
    """q = ‖x‖²‖y‖² + 2(xᵀy)² − 2Σx_i²y_i²: for axis-aligned inputs q = x²y², not 3x²y² (the
    Gaussian value); the two differ by more than the Monte Carlo tolerance above."""
    x, y = PAIRS["aligned"]
    gaussian_q = 3 * 0.81 * 0.64
    rademacher = maclaurin_second_moment(x, y)
    from scipy.special import hyp0f1

    assert hyp0f1(1.0, gaussian_q / 0.5) / 0.5 > 1.5 * rademacher
    assert rademacher == pytest.approx(2 * hyp0f1(1.0, 2 * 0.81 * 0.64), rel=1e-14)


def test_maclaurin_features_match_the_estimate_and_options_are_checked():
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(2, 5, 3)) * 0.5
    est = registry.get("maclaurin", m=16)
    draw = est.sample(rng, d=3, draws=2)
    np.testing.assert_allclose(
        np.einsum("bnf,bkf->bnk", est.query_features(draw, X), est.key_features(draw, Y)),
        est.estimate(draw, X, Y),
        rtol=1e-12,
        atol=1e-14,
    )
    with pytest.raises(ValueError, match="ratio"):
        registry.get("maclaurin", ratio=1.0)
    with pytest.raises(ValueError, match="frames"):
        est.sample(rng, d=3, frame=2)


def test_maclaurin_packs_only_the_rows_it_uses_and_handles_zero_projections():
    """Rows are packed per draw (about m·r/(1 − r), not m·max degree), and a zero projection
    (x = 0) gives a zero feature for every N ≥ 1, not NaN: at x = 0 the estimate is
    (1/m)·#{N_i = 0}/(1 − r), with mean e⁰ = 1."""
    est = registry.get("maclaurin", m=256)
    draw = est.sample(np.random.default_rng(4), d=3, draws=500)
    assert draw.projections["omega"].count <= 256 + 5 * np.sqrt(2 * 256) + 10
    assert np.array_equal(draw.params["end"][:, -1], draw.params["degree"].sum(axis=1))
    zero = np.zeros((1, 3))
    k = est.estimate(draw, zero, zero)[:, 0, 0]
    expected = np.mean(draw.params["degree"] == 0, axis=1) / 0.5
    np.testing.assert_allclose(k, expected, rtol=1e-12)
    assert abs(k.mean() - 1.0) < 5 * k.std(ddof=1) / np.sqrt(k.size)
