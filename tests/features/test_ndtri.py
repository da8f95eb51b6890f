"""Φ⁻¹ by array operations (rfbench.compute.features.weights.ndtri): Cephes ndtri, as
scipy.special.ndtri.

The central branch must equal scipy's bit for bit (same operations in the same order); the tails
may differ by numpy's log against the C library's (an ulp), so they are held to 2e-15 relative of
scipy and of a 40-digit mpmath quantile.
"""

from __future__ import annotations

import warnings

import mpmath
import numpy as np
import pytest
from scipy import special

from rfbench.compute.features.weights import ndtri as nd
from rfbench.compute.features.weights.ndtri import ndtri_inplace

E2 = float(np.exp(-2.0))


def uniform_grid(n: int, seed: int) -> np.ndarray:
    """(k + ½)·2^-52: the randomised Sobol' points' grid."""
    k = np.random.default_rng(seed).integers(0, 1 << 52, n)
    return (k.astype(np.float64) + 0.5) * 2.0**-52


def mp_quantile(p: float) -> float:
    """Φ⁻¹(p) to 40 digits: the root of Φ(x) = p (mpmath's Φ is accurate in the tails)."""
    with mpmath.workdps(40):
        return float(mpmath.findroot(lambda x: mpmath.ncdf(x) - p, special.ndtri(p)))


def test_central_branch_is_scipys_bit_for_bit_and_tails_within_round_off():
    y = np.concatenate([uniform_grid(300_000, 0), np.random.default_rng(1).random(300_000)])
    ref = special.ndtri(y)
    got = ndtri_inplace(y.copy())
    central = (y > nd._E2) & (y <= nd._HIGH)
    assert 0.7 < central.mean() < 0.76
    np.testing.assert_array_equal(got[central], ref[central])
    np.testing.assert_allclose(got[~central], ref[~central], rtol=2e-15, atol=0)


def test_matches_a_40_digit_quantile():
    p = np.concatenate(
        [
            [2.0**-53, 1e-300, 1e-20, 1.2e-14, 1.3e-14, 1e-3, 0.05, 0.1, E2, 0.2, 0.3, 0.5],
            np.nextafter([E2, E2, 1 - E2, 1 - E2], [0, 1, 0, 1]),
            [0.7, 0.9, 0.99, 1 - 1e-10, 1 - 2.0**-53],
            uniform_grid(200, 2),
        ]
    )
    want = np.array([mp_quantile(v) for v in p])
    np.testing.assert_allclose(ndtri_inplace(p.copy()), want, rtol=2e-15, atol=1e-300)


def test_edges_chunks_and_shape():
    y = np.array([0.0, 1.0, np.nan, -0.5, 1.5, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ndtri_inplace(y.copy())
    np.testing.assert_array_equal(got[:2], [-np.inf, np.inf])
    assert np.isnan(got[2:5]).all() and got[5] == 0.0
    big = uniform_grid(3 * nd._CHUNK + 17, 3).reshape(-1, 1, 1)  # tails in every chunk
    big[-1] = 1e-30  # the deep tail (scipy's branch) in the last, partial chunk
    out = ndtri_inplace(big)
    assert out is big and out.shape == (3 * nd._CHUNK + 17, 1, 1)
    want = special.ndtri(uniform_grid(big.size, 3))
    want[-1] = special.ndtri(1e-30)
    np.testing.assert_allclose(out.ravel(), want, rtol=2e-15)
    assert out.ravel()[-1] == want[-1]
    with pytest.raises(ValueError, match="C-contiguous"):
        ndtri_inplace(np.ones((4, 4))[:, ::2])
