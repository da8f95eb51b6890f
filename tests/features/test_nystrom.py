"""Nyström (``nystrom``, ``nystrom-kmeans``; docs/methods.md#nystrom): scikit-learn agreement on
shared landmarks, the defining formula for the softmax kernel, exactness on the landmarks, the
cut-off on repeated landmarks, and k-means landmarks equal to Lloyd's algorithm."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.kernel_approximation import Nystroem

from rfbench.compute.features import registry
from rfbench.compute.features.nystrom import kmeans_landmarks
from rfbench.compute.kernels import kernel_matrix


def _data(seed: int = 0, n: int = 12, d: int = 5) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d)) * 0.6


def test_equals_scikit_learn_for_the_gaussian_kernel_on_the_same_landmarks():
    L = _data(0, n=10)
    X, Y = _data(1, n=7), _data(2, n=6)
    est = registry.get("nystrom", kernel="gaussian", m=len(L))
    draw = est.sample(np.random.default_rng(3), d=5, draws=2, fit=(L, L))  # all 10 are landmarks
    ours = est.estimate(draw, X, Y)
    sk = Nystroem(kernel="rbf", gamma=0.5, n_components=len(L), random_state=0).fit(L)
    theirs = sk.transform(X) @ sk.transform(Y).T
    np.testing.assert_allclose(ours, np.broadcast_to(theirs, ours.shape), rtol=0, atol=1e-10)
    # and the comparison is not vacuous: the approximation is not the exact kernel
    assert np.max(np.abs(theirs - kernel_matrix("gaussian", X, Y))) > 1e-3


def test_softmax_kernel_follows_the_defining_formula_and_maps_agree():
    pool = _data(4, n=15)
    X, Y = _data(5, n=4), _data(6, n=3)
    est = registry.get("nystrom", kernel="softmax", m=6)
    draw = est.sample(np.random.default_rng(7), d=5, draws=3, fit=(pool, pool[:5]))
    K_hat = est.estimate(draw, X, Y)
    for b, L in enumerate(draw.projections["landmarks"].W):
        assert {tuple(r) for r in L} <= {tuple(r) for r in pool}
        expected = (
            kernel_matrix("softmax", X, L)
            @ np.linalg.pinv(kernel_matrix("softmax", L, L))
            @ kernel_matrix("softmax", L, Y)
        )
        np.testing.assert_allclose(K_hat[b], expected, rtol=1e-9)
    phi, psi = est.query_features(draw, X), est.key_features(draw, Y)
    np.testing.assert_allclose(np.einsum("bnf,bkf->bnk", phi, psi), K_hat, rtol=1e-12)
    assert phi.shape == (3, 4, 6)


@pytest.mark.parametrize("kernel", ["gaussian", "softmax"])
def test_exact_on_the_landmarks_and_draws_differ(kernel):
    pool = _data(8, n=20)
    est = registry.get("nystrom", kernel=kernel, m=8)
    draw = est.sample(np.random.default_rng(9), d=5, draws=4, fit=(pool, pool))
    L = draw.projections["landmarks"].W
    for b in range(4):
        K_hat = est.estimate(draw, L[b], L[b])[b]
        np.testing.assert_allclose(K_hat, kernel_matrix(kernel, L[b], L[b]), rtol=1e-8)
    assert not np.allclose(L[0], L[1])


def test_repeated_landmarks_are_cut_off_not_amplified():
    """Two landmarks repeated 1e-7 apart: the relative cut-off drops the near-null direction
    (eigenvalue ~1e-14) and gives the Nyström approximation of the distinct landmarks, to
    O(1e-7); with no cut-off (rcond = 0) that direction is inverted and the result moves by
    O(0.1) — the ill-conditioned inverse the cut-off exists to avoid."""
    base, X = _data(10, n=4), _data(20, n=5)
    pool = np.vstack([base, base[:2] + 1e-7])
    K_xb = kernel_matrix("gaussian", X, base)
    distinct = K_xb @ np.linalg.inv(kernel_matrix("gaussian", base, base)) @ K_xb.T
    errors = {}
    for rcond in (1e-10, 0.0):
        est = registry.get("nystrom", kernel="gaussian", m=6, rcond=rcond)
        draw = est.sample(np.random.default_rng(11), d=5, fit=(pool, pool))
        errors[rcond] = np.max(np.abs(est.estimate(draw, X, X)[0] - distinct))
    assert errors[1e-10] < 1e-6
    assert errors[0.0] > 1e-2


def test_kmeans_landmarks_are_lloyd_centres():
    pool = np.vstack([_data(12, n=30) + 3, _data(13, n=30) - 3, _data(14, n=30)])
    start = pool[[0, 1, 40, 70]][None]
    ours = kmeans_landmarks(pool, start, iters=50)[0]
    km = KMeans(n_clusters=4, init=start[0], n_init=1, max_iter=50, tol=0.0).fit(pool)
    np.testing.assert_allclose(ours, km.cluster_centers_, atol=1e-10)
    est = registry.get("nystrom-kmeans", kernel="gaussian", m=3)
    draw = est.sample(np.random.default_rng(15), d=5, draws=2, fit=(pool, pool))
    assert draw.projections["landmarks"].W.shape == (2, 3, 5)


def test_beats_random_fourier_features_on_digits_at_equal_width():
    """The issue's motivation: on digits Nyström's relative Gram error is far below trig@iid's.
    (2m = 64 trig features vs 64 landmarks; scaled so the Gaussian kernel is informative.)"""
    from sklearn.datasets import load_digits

    X = load_digits().data[:150] / 16.0 / 2.5
    K = kernel_matrix("gaussian", X, X)
    errors = {}
    for name, m in (("nystrom", 64), ("trig@iid", 32)):
        est = registry.get(name, kernel="gaussian", m=m)
        draw = est.sample(np.random.default_rng(16), d=64, draws=3, fit=(X, X))
        K_hat = est.estimate(draw, X, X)
        errors[name] = np.mean(np.linalg.norm(K_hat - K, axis=(1, 2)) / np.linalg.norm(K))
    assert errors["nystrom"] < 0.5 * errors["trig@iid"], errors


def test_needs_fit_data_and_checks_options():
    est = registry.get("nystrom", m=3)
    with pytest.raises(ValueError, match="fit="):
        est.sample(np.random.default_rng(0), d=5)
    with pytest.raises(ValueError, match="landmarks"):
        registry.get("nystrom", landmarks="random")
    assert registry.describe("nystrom").estimator.data_dependent
    assert not est.unbiased and not est.deterministic


@pytest.mark.parametrize("name", ["nystrom", "nystrom-kmeans", "taylor2", "maclaurin", "trig@pnc"])
def test_new_estimators_pass_scikit_learn_conformance(name):
    """The transformer (rfbench.sklearn) passes the landmarks' data through fit=(X, X)."""
    from sklearn.utils.estimator_checks import check_estimator

    from rfbench.sklearn import RandomFeatures

    check_estimator(RandomFeatures(name, n_components=4, kernel="gaussian"))
