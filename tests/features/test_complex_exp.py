"""Complex-exponential features (HRF Sec. 2.3; docs/methods.md#complex-exp, #hrf-cluster-hybrid)."""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.features import registry, theory
from rfbench.compute.features.complex_exp import (
    ComplexExp,
    complex_diagonal_A,
    real_diagonal_A,
)

X = np.array([[0.4, -0.2, 0.3], [0.1, 0.5, -0.2]])
Y = np.array([[-0.3, 0.2, 0.4], [0.2, 0.1, 0.1], [0.0, -0.4, 0.2]])


def draws_of(name: str, seed: int, N: int, d: int, frame=None, kernel="softmax", m=6, **opts):
    est = registry.get(name, kernel=kernel, m=m, **opts)
    return est, est.sample(np.random.default_rng(seed), d, draws=N, frame=frame)


@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
@pytest.mark.parametrize("frame", [None, 2])
def test_iI_is_trig_and_I_is_positive(kernel, frame):
    """A = iI: Re(estimate) ≡ trig; A = I: ≡ SM⁺ (same ω; HRF; docs/methods.md#complex-exp,
    #hrf-erratum-11)."""
    d = 3
    Xf, Yf = (X, Y) if frame is None else (X[:, :2], Y[:, :2])
    for options, other in (({}, "trig@iid"), ({"A": 1.0}, "positive@iid")):
        est, draw = draws_of("complex-exp@iid", 7, 4, d, frame, kernel, **options)
        ref, rdraw = draws_of(other, 7, 4, d, frame, kernel)
        np.testing.assert_array_equal(draw.projections["omega"].W, rdraw.projections["omega"].W)
        np.testing.assert_allclose(
            est.estimate(draw, Xf, Yf), ref.estimate(rdraw, Xf, Yf), rtol=1e-12
        )


def test_features_are_complex_and_bilinear():
    est, draw = draws_of("complex-exp@iid", 1, 3, 3, diag=np.array([1 + 1j, 0.5j, 2.0]))
    Phi, Psi = est.query_features(draw, X), est.key_features(draw, Y)
    assert Phi.shape == (3, 2, 6) and Psi.shape == (3, 3, 6)
    assert np.iscomplexobj(Phi) and not est.component.positive
    # bilinear product, real part (no conjugation)
    direct = np.einsum("bnf,bmf->bnm", Phi, Psi).real
    np.testing.assert_allclose(est.estimate(draw, X, Y), direct, rtol=1e-12)
    assert not np.allclose(np.einsum("bnf,bmf->bnm", Phi, Psi.conj()).real, direct)
    # real A: real, positive features
    est_r, draw_r = draws_of("complex-exp@iid", 1, 3, 3, diag=np.array([1.0, 0.5, 2.0]))
    assert np.isrealobj(est_r.query_features(draw_r, X)) and est_r.component.positive


@pytest.mark.parametrize("kind", ["diag", "A"])
def test_features_match_the_definition(kind):
    """Ψ_A(x)_i Ψ_B(y)_i = exp(-(Ax)²/2 - (By)²/2 + ω_iᵀ(Ax + By))/m, bilinear squares (Eq. 15)."""
    rng = np.random.default_rng(8)
    A = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    opts = {"diag": A[0] * 1.5} if kind == "diag" else {"A": A}
    est, draw = draws_of("complex-exp@iid", 2, 2, 3, m=5, **opts)
    W = draw.projections["omega"].W
    ax, by = est.component.apply(X, "query"), est.component.apply(Y, "key")
    expo = (-0.5 * np.sum(ax * ax, -1))[:, None] - 0.5 * np.sum(by * by, -1)[None, :]
    expo = expo[None, :, :, None] + np.einsum("nd,bmd->bnm", ax, W)[:, :, None, :]
    expo = expo + np.einsum("kd,bmd->bkm", by, W)[:, None, :, :]
    terms = np.einsum("bnm,bkm->bnkm", est.query_features(draw, X), est.key_features(draw, Y))
    np.testing.assert_allclose(terms, np.exp(expo) / 5, rtol=1e-10)


def test_key_side_uses_inverse_transpose():
    """(Ax)ᵀ(By) = xᵀy with B = (Aᵀ)⁻¹ for a full complex A."""
    rng = np.random.default_rng(2)
    A = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    comp = ComplexExp(A=A)
    lhs = np.einsum("ni,mi->nm", comp.apply(X, "query"), comp.apply(Y, "key"))
    np.testing.assert_allclose(lhs, X @ Y.T, atol=1e-12)
    assert not comp.rotation_invariant and ComplexExp(A=2j).rotation_invariant


def test_frames_need_a_multiple_of_identity():
    with pytest.raises(ValueError, match="full projections"):
        draws_of("complex-exp@iid", 0, 2, 3, frame=2, diag=np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="invertible"):
        ComplexExp(diag=np.array([1.0, 0.0]))
    with pytest.raises(TypeError):
        ComplexExp(A=1.0, diag=np.ones(2))


A_CASES = {
    "iI": {},
    "I": {"A": 1.0},
    "complex-diag": {"diag": np.array([0.9 * np.exp(0.4j), 1.1 * np.exp(-0.7j), np.exp(1.2j)])},
    "real-diag": {"diag": np.array([0.8, 1.3, 1.0])},
}


@pytest.mark.parametrize("case", sorted(A_CASES))
def test_unbiased_and_mse_matches_theory(case):
    """E[Re K̂] = SM and MC MSE = the closed form of HRF Sec. 2.3, Lemma 2.4;
    docs/methods.md#complex-exp (tolerances from it)."""
    x, y = np.array([0.5, -0.3, 0.2]), np.array([0.3, 0.4, -0.1])
    N = 100_000
    est, draw = draws_of("complex-exp@iid", 11, N, 3, m=4, **A_CASES[case])
    k = est.estimate(draw, x, y)[:, 0, 0]
    K, mse = np.exp(x @ y), float(theory.mse(est, x, y))
    tol = 5 * np.sqrt(mse / N)
    assert tol < 0.05 * K  # far below a factor-2 error
    assert abs(k.mean() - K) < tol
    err2 = (k - K) ** 2
    se = err2.std() / np.sqrt(N)
    assert 5 * se < 0.5 * mse
    assert abs(err2.mean() - mse) < 5 * se, (err2.mean() / mse, se / mse)


def test_real_diagonal_minimum():
    """Eq. 88: l(A) = 4 Σ_{same sign} r_i r_j, and no other positive diagonal does better."""
    rng = np.random.default_rng(5)
    ri, rj = rng.normal(size=(2, 8))
    a = real_diagonal_A(ri, rj)
    loss = lambda a: np.sum((a * ri + rj / a) ** 2)  # noqa: E731
    same = ri * rj > 0
    assert loss(a) == pytest.approx(4 * np.sum(ri[same] * rj[same]), rel=1e-12)
    for _ in range(50):
        assert loss(a * np.exp(0.1 * rng.normal(size=8))) >= loss(a)


def test_real_diagonal_mse_at_centres():
    """At the centres the real-A estimator has MSE (SM²/m)(e^l - 1), l = 4Σ_{same sign} r_i r_j."""
    ri, rj = np.array([0.3, -0.2, 0.25]), np.array([0.2, 0.4, -0.3])
    m, N = 3, 100_000
    est, draw = draws_of("complex-exp@iid", 3, N, 3, m=m, diag=real_diagonal_A(ri, rj))
    k = est.estimate(draw, ri, rj)[:, 0, 0]
    K, l_min = np.exp(ri @ rj), 4 * 0.3 * 0.2
    mse = K**2 * np.expm1(l_min) / m
    assert float(theory.mse(est, ri, rj)) == pytest.approx(mse, rel=1e-12)
    err2 = (k - K) ** 2
    se = err2.std() / np.sqrt(N)
    assert abs(err2.mean() - mse) < 5 * se < 0.5 * mse


@pytest.mark.parametrize("seed", [0, 1])
def test_complex_diagonal_is_exact_at_centres(seed):
    """Eq. 86–87: A r_i + A⁻¹ r_j = 0, so the estimator has zero variance at (r_i, r_j) (Eq. 17)."""
    ri, rj = np.random.default_rng(seed).normal(size=(2, 6))
    A = complex_diagonal_A(ri, rj)
    np.testing.assert_allclose(A * ri + rj / A, 0, atol=1e-14)
    est, draw = draws_of("complex-exp@iid", seed, 500, 6, m=5, diag=A)
    k = est.estimate(draw, ri, rj)[:, 0, 0]
    np.testing.assert_allclose(k, np.exp(ri @ rj), rtol=1e-10)
    assert float(theory.mse(est, ri, rj)) < 1e-20 * np.exp(2 * ri @ rj)
    # the real diagonal is not exact there when some coordinates share a sign
    est_r, draw_r = draws_of("complex-exp@iid", seed, 500, 6, m=5, diag=real_diagonal_A(ri, rj))
    assert np.std(est_r.estimate(draw_r, ri, rj)) > 1e-3 * np.exp(ri @ rj)


def test_diagonal_edge_cases():
    """Zero coordinates (HRF App. H.2; docs/methods.md#hrf-cluster-hybrid): both 0 -> 1 (real) or
    1 + i; one 0 -> large/small."""
    ri, rj = np.array([0.0, 0.0, 0.5, 1.0]), np.array([0.0, 0.7, 0.0, -4.0])
    a = real_diagonal_A(ri, rj, large=1e8)
    np.testing.assert_allclose(a, [1.0, 1e8, 1e-8, 2.0])
    c = complex_diagonal_A(ri, rj, large=1e8)
    np.testing.assert_allclose(c, [1 + 1j, 1e8, (1 + 1j) * 1e-8, 2.0])
    assert np.max(np.abs(c * ri + rj / c)) < 1e-7


def test_determinism():
    opts = {"diag": np.array([1j, 0.7, 1.2 - 0.3j])}
    a = [draws_of("complex-exp@iid", 9, 5, 3, **opts) for _ in range(2)]
    e1, e2 = (est.estimate(draw, X, Y) for est, draw in a)
    np.testing.assert_array_equal(e1, e2)
    est, draw = draws_of("complex-exp@iid", 10, 5, 3, **opts)
    assert not np.allclose(est.estimate(draw, X, Y), e1)
