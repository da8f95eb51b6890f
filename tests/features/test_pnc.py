"""Pairwise norm coupling (`@pnc`, VRC (Reid et al., ICLR 2025); docs/methods.md#pnc).

Marginals (KS against χ_d), the exact antithetic identity, orthogonality, unbiasedness (z-test
with the sample's own SE), the variance against the closed form of theory/pnc.py (Monte Carlo at a
tolerance from the sample's 4th moment, asserted tight enough to catch a factor 2 and to tell PNC
from ORF), and the closed form against the reference quadrature values of the VRC reading.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rfbench.compute.features import registry
from rfbench.compute.features.theory import coupled, pnc
from rfbench.compute.features.weights.pnc import paired_norms
from rfbench.compute.kernels import kernel_matrix


def _norms(W: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("...i,...i->...", W, W))


@pytest.mark.parametrize(("d", "m"), [(6, 6), (5, 5), (4, 10)])
def test_norms_are_marginally_chi_d_and_pairs_countermonotone(d, m):
    proj = registry.make_weights("pnc").sample(np.random.default_rng(1), d, m, draws=4000)
    w = _norms(proj.W)
    np.testing.assert_allclose(w**2, proj.sq_norms, rtol=1e-12)
    for i in range(m):
        assert stats.kstest(w[:, i], stats.chi(d).cdf).pvalue > 1e-4, i
    # the KS test has power: ORF's own norms squared are not χ_d
    assert stats.kstest(w[:, 0] ** 2, stats.chi(d).cdf).pvalue < 1e-6
    F = stats.chi(d).cdf
    for start in range(0, m - 1, d):
        block = range(start, min(start + d, m))
        for a in list(block)[0 : 2 * (len(block) // 2) : 2]:
            np.testing.assert_allclose(F(w[:, a]) + F(w[:, a + 1]), 1.0, atol=1e-12)
        rows = proj.W[:, list(block)] / w[:, list(block), None]
        gram = rows @ np.swapaxes(rows, 1, 2)
        eye = np.broadcast_to(np.eye(len(block)), gram.shape)
        np.testing.assert_allclose(gram, eye, atol=1e-10)


@pytest.mark.slow
def test_pair_correlation_matches_the_reading():
    """Corr(w_a, w_b) of the countermonotone χ_6 pair is −0.988027 (VRC reading, §5.4)."""
    w = paired_norms(np.random.default_rng(2), 200_000, 6)
    r = np.corrcoef(w[:, 0], w[:, 1])[0, 1]
    assert abs(r - (-0.988027)) < 1e-3
    # rho = 0 is ORF: uncorrelated norms
    w0 = paired_norms(np.random.default_rng(2), 200_000, 6, rho=0.0)
    assert abs(np.corrcoef(w0[:, 0], w0[:, 1])[0, 1]) < 5 / np.sqrt(200_000)


def test_rho_is_validated():
    with pytest.raises(ValueError, match="rho"):
        registry.get("trig@pnc", weights_rho=-1.5)


def _pair(d: int, r: float, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed).standard_normal((2, d))
    g = g / np.linalg.norm(g, axis=1, keepdims=True)
    return r * g[0], 0.8 * r * g[1]


CASES = [
    ("trig", "gaussian", 6, 6),
    ("trig", "softmax", 6, 9),
    ("positive", "gaussian", 6, 6),
    ("positive", "softmax", 5, 5),
    ("hyperbolic", "gaussian", 6, 9),
]


@pytest.mark.slow
@pytest.mark.parametrize(("component", "kernel", "d", "m"), CASES)
def test_unbiased_and_variance_matches_the_closed_form(component, kernel, d, m):
    x, y = _pair(d, 0.6)
    est = registry.get(f"{component}@pnc", kernel=kernel, m=m)
    draws = 40_000
    draw = est.sample(np.random.default_rng(3), d, draws=draws)
    k = est.estimate(draw, x[None], y[None])[:, 0, 0]
    true = float(kernel_matrix(kernel, x[None], y[None])[0, 0])
    se = k.std(ddof=1) / np.sqrt(draws)
    assert 5 * se < 0.5 * true
    assert abs(k.mean() - true) < 5 * se, f"bias {(k.mean() - true) / se:.1f} SE"
    var = k.var(ddof=1)
    centred = k - k.mean()
    se_var = np.sqrt((np.mean(centred**4) - var**2) / draws)  # from the sample's 4th moment
    theory = float(pnc.mse(component, x, y, m, kernel=kernel))
    orf = float(coupled.mse(component, "orf", x, y, m, kernel=kernel))
    assert 5 * se_var < 0.5 * theory  # a factor-2 error cannot pass
    assert abs(var - theory) < 5 * se_var, f"Var/theory = {var / theory:.3f}"
    if component == "trig":  # and the test tells PNC from ORF (RFF gain ≈ 30-45 % here)
        assert abs(var - orf) > 5 * se_var


def test_frames_give_the_same_law():
    """frame=2 (pointwise experiment) draws the same estimator: variance vs the closed form."""
    d, m = 6, 6
    x, y = np.zeros(d), np.zeros(d)
    x[0], y[1] = 0.7, 0.7
    est = registry.get("trig@pnc", kernel="gaussian", m=m)
    draw = est.sample(np.random.default_rng(4), d, draws=40_000, frame=2)
    k = est.estimate(draw, x[None, :2], y[None, :2])[:, 0, 0]
    theory = float(pnc.mse("trig", x, y, m, kernel="gaussian"))
    se_var = np.sqrt((np.mean((k - k.mean()) ** 4) - k.var() ** 2) / k.size)
    assert 5 * se_var < 0.5 * theory
    assert abs(k.var(ddof=1) - theory) < 5 * se_var


# Exact quadrature values of the VRC reading (§5.3), Gaussian kernel.
RFF_TABLE = [  # d, m, z, Var_PNC
    (2, 2, 1.0, 0.0417083289),
    (4, 4, 0.5, 0.00197737802),
    (6, 6, 1.0, 0.00547549429),
    (6, 5, 1.0, 0.0132480025),
    (16, 16, 2.0, 0.0196687338),
    (16, 8, 1.0, 0.0137621804),
    (64, 64, 1.0, 0.000260583693),
]
RLF_TABLE = [  # d, m, v (x = y = v/2 e_1), Var_PNC
    (2, 2, 1.0, 0.791157389),
    (6, 6, 0.5, 0.0437266438),
    (6, 5, 1.0, 0.296785312),
    (16, 16, 2.0, 3.07945943),
]


@pytest.mark.parametrize(("d", "m", "z", "value"), RFF_TABLE)
def test_rff_closed_form_matches_reference_quadrature(d, m, z, value):
    x, y = np.zeros(d), np.zeros(d)
    y[0] = z
    assert pnc.mse("trig", x, y, m, kernel="gaussian") == pytest.approx(value, rel=1e-6)


@pytest.mark.parametrize(("d", "m", "v", "value"), RLF_TABLE)
def test_rlf_closed_form_matches_reference_quadrature(d, m, v, value):
    x = np.zeros(d)
    x[0] = v / 2
    assert pnc.mse("positive", x, x, m, kernel="gaussian") == pytest.approx(value, rel=1e-6)


def test_pnc_can_lose_to_orf_at_large_distances():
    """RFF guarantee only for small z: PNC/ORF = 1.111 at d = 2, z = 3; 0.617 at z = 1."""
    assert pnc.variance_ratio("trig", 2, 2, 3.0) == pytest.approx(1.111, abs=1e-3)
    assert pnc.variance_ratio("trig", 2, 2, 1.0) == pytest.approx(0.617105, abs=1e-6)


@pytest.mark.parametrize(("d", "c_d"), [(6, 0.861570), (16, 0.945766)])
def test_small_distance_ratio_is_one_minus_c_over_three(d, c_d):
    """Small-z expansion (VRC reading §5.2): PNC/ORF → 1 − c_d/3 at m = d."""
    assert pnc.variance_ratio("trig", d, d, 0.02) == pytest.approx(1 - c_d / 3, abs=2e-3)


def test_no_closed_form_for_a_smoothed_copula():
    from rfbench.compute.features import theory

    est = registry.get("trig@pnc", m=6, weights_rho=-0.99)
    with pytest.raises(NotImplementedError):
        theory.mse(est, np.ones(6) * 0.1, np.ones(6) * 0.2)


def test_pair_moments_are_memoised_bit_for_bit():
    """The memo (positive and hyperbolic share f; one Gram job asks once per kernel) returns what
    a fresh evaluation gives, for the component family it was computed for only."""
    a = np.random.default_rng(3).uniform(0.0, 3.0, (4, 5))
    pnc._memo.clear()
    first = pnc.coupled_pair_moment("positive", 6, a)
    assert pnc.coupled_pair_moment("hyperbolic", 6, a.copy()) is first
    fresh = pnc._pair_moment("positive", 6, a)
    for got, want in zip(first, fresh, strict=True):
        np.testing.assert_array_equal(got, want)
        assert not got.flags.writeable
    trig = pnc.coupled_pair_moment("trig", 6, a)
    np.testing.assert_array_equal(trig[0], pnc._pair_moment("trig", 6, a)[0])
    assert pnc.coupled_pair_moment("positive", 7, a) is not first
