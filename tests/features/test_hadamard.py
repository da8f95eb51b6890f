"""Fast Walsh–Hadamard transforms of the structured couplings against the dense construction."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from rfbench.compute.features.weights import hadamard
from rfbench.compute.features.weights.hadamard import (
    StructuredProjections,
    fwht,
    fwht_numpy,
    simplex_apply,
)
from rfbench.compute.features.weights.mc import simplex_directions
from rfbench.compute.features.weights.structured import SORF, FastFood, FastORF, FastSimRF

SAMPLERS = [SORF, FastORF, FastSimRF, FastFood]
#: (d, m): powers of two and padded dimensions, one block, several blocks, truncated blocks
SIZES = [(2, 2), (3, 5), (16, 40), (20, 70), (64, 64), (100, 300)]
#: float64 round-off of a few hundred additions of O(1) terms, relative to the largest entry
TOL = 1e-13


@pytest.mark.parametrize("n", [1, 2, 8, 64, 128, 1024])
def test_fwht_numpy_is_the_sylvester_hadamard_product(n):
    x = np.random.default_rng(n).standard_normal((3, 2, n))
    expected = x @ scipy.linalg.hadamard(n)
    np.testing.assert_allclose(fwht_numpy(x), expected, rtol=0, atol=TOL * n)
    np.testing.assert_allclose(fwht(x), expected, rtol=0, atol=TOL * n)


@pytest.mark.skipif(not hadamard.HAVE_FHT_CPU, reason="fht-cpu not installed")
def test_fht_cpu_in_place_only_when_asked():
    x = np.random.default_rng(0).standard_normal((4, 32))
    keep = x.copy()
    y = fwht(x, use_fht_cpu=True)
    np.testing.assert_array_equal(x, keep)
    z = fwht(x, use_fht_cpu=True, inplace=True)
    assert z is not None and np.shares_memory(z, x)
    np.testing.assert_allclose(z, keep @ scipy.linalg.hadamard(32), atol=1e-12)
    np.testing.assert_allclose(y, z, atol=0)


def test_fwht_rejects_other_lengths():
    with pytest.raises(ValueError, match="power-of-two"):
        fwht(np.ones(6))


@pytest.mark.parametrize("n", [2, 8, 64])
def test_simplex_apply_is_the_simplex_product(n):
    z = np.random.default_rng(n).standard_normal((5, n))
    np.testing.assert_allclose(simplex_apply(z), z @ simplex_directions(n).T, atol=1e-13)


@pytest.mark.parametrize("cls", SAMPLERS)
@pytest.mark.parametrize(("d", "m"), SIZES)
def test_structured_draws_match_the_dense_construction(cls, d, m):
    """Same seed → same rows, norms and projections as the dense Hadamard matrices."""
    sampler = cls()
    fast = sampler.sample(np.random.default_rng(7), d, m, 3)
    dense = sampler.sample_dense(np.random.default_rng(7), d, m, 3)
    assert isinstance(fast, StructuredProjections)
    assert fast.W.shape == dense.W.shape == (3, m, d)
    scale = np.abs(dense.W).max()
    np.testing.assert_allclose(fast.W, dense.W, rtol=0, atol=TOL * scale)
    np.testing.assert_allclose(fast.sq_norms, dense.sq_norms, rtol=1e-13)
    X = np.random.default_rng(8).standard_normal((9, d))
    expected = dense.project(X)
    for forced in (True, False):
        got = fast.with_fast(forced).project(X)
        assert got.shape == (3, 9, m)
        np.testing.assert_allclose(got, expected, rtol=0, atol=TOL * np.abs(expected).max())
    per_draw = np.random.default_rng(9).standard_normal((3, 4, d))
    np.testing.assert_allclose(
        fast.with_fast(True).project(per_draw), dense.project(per_draw), atol=1e-12
    )


@pytest.mark.parametrize("cls", SAMPLERS)
def test_chain_without_fht_cpu_matches(cls):
    proj = cls().sample(np.random.default_rng(3), 40, 100, 2)
    X = np.random.default_rng(4).standard_normal((6, 40))
    expected = np.einsum("bmk,nk->bnm", proj.W, X)
    np.testing.assert_allclose(proj.chain.apply(X, use_fht_cpu=False), expected, atol=1e-12)


def test_scaled_structured_projections_scale_the_chain():
    proj = SORF().sample(np.random.default_rng(5), 30, 64, 2)
    X = np.random.default_rng(6).standard_normal((4, 30))
    half = proj.scaled(0.5)
    assert isinstance(half, StructuredProjections)
    np.testing.assert_allclose(half.with_fast(True).project(X), 0.5 * proj.project(X), atol=1e-12)
    np.testing.assert_allclose(half.sq_norms, 0.25 * proj.sq_norms)


def test_fast_path_is_chosen_by_padded_dimension():
    small = SORF().sample(np.random.default_rng(0), 8, 8, 1)
    large = SORF().sample(np.random.default_rng(0), hadamard.FAST_FROM, 8, 1)
    assert not small.use_chain() and large.use_chain()
    assert small.with_fast(True).use_chain() and not large.with_fast(False).use_chain()
