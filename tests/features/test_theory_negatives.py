"""Exact P(K̂_trig < 0) (CSE Fig. 4) against Monte Carlo of the trig estimator itself."""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.features import registry
from rfbench.compute.features.theory import equal_norm_pair
from rfbench.compute.features.theory.negatives import cos_char, trig_negative_probability


@pytest.mark.parametrize(("theta", "m"), [(7 * np.pi / 8, 16), (np.pi, 32)])
def test_negative_probability_matches_monte_carlo(theta: float, m: int) -> None:
    est = registry.get("trig@iid", kernel="softmax", m=m)
    x, y = equal_norm_pair(1.0, theta, 6)
    rng = np.random.default_rng(7)
    n = 20_000
    draw = est.sample(rng, d=6, draws=n)
    values = np.asarray(est.estimate(draw, x, y)).reshape(n)
    p_mc = float(np.mean(values < 0))
    p = float(trig_negative_probability(theta, m)[0])
    se = np.sqrt(p * (1 - p) / n)
    assert 0.005 < p < 0.5  # a regime where the test can fail
    assert abs(p_mc - p) < 5 * se


def test_char_function_matches_quadrature() -> None:
    z, w = np.polynomial.hermite_e.hermegauss(200)
    w = w / w.sum()
    t = np.array([0.3, 1.7, 4.0])
    for s in (0.4, 1.3, 2.0):
        direct = (np.exp(1j * t[:, None] * np.cos(s * z[None, :])) * w).sum(axis=1)
        np.testing.assert_allclose(cos_char(t, s), direct, atol=1e-6)


def test_limits() -> None:
    assert trig_negative_probability(0.0, 128)[0] == 0.0  # K̂ = K exactly at θ = 0
    # far apart points (s = 10): cos(sZ) is symmetric about 0 to e^{-50}, so P(S < 0) = 1/2
    assert abs(trig_negative_probability(np.pi, 16, r=5.0)[0] - 0.5) < 1e-6


@pytest.mark.parametrize("s", [0.05, 0.3, 1.0, 2.0])
def test_the_series_stops_where_its_weights_vanish(s):
    """φ_C keeps the Jacobi–Anger terms whose weight e^{−k²s²/2} ≥ 1e-18 (|J_k| ≤ 1): equal to
    the series up to k_max to 1e-15 (the full series made a tiny pointwise run take a minute)."""
    from scipy.special import jv

    from rfbench.compute.features.theory.negatives import cos_char

    t = np.linspace(0.01, 300.0, 1500)
    k = np.arange(1, int(300 + 20 * 300 ** (1 / 3) + 41))
    weights = 2 * (1j**k) * np.exp(-0.5 * (k * s) ** 2)
    full = jv(0, t) + (jv(k[None, :], t[:, None]) * weights[None, :]).sum(axis=1)
    np.testing.assert_allclose(cos_char(t, s), full, rtol=0, atol=1e-15)
