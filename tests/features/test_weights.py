"""Couplings of the projections ω (rfbench.compute.features.weights): laws, geometry, shapes, seeds.

Statistical tolerances are 5 standard errors of the tested statistic, and KS tests use fixed
seeds with p > 1e-3; each asserts (where it matters) that the tolerance is smaller than the
effect of a factor-2 mistake.
"""

from __future__ import annotations

import warnings
from functools import cache
from math import gcd

import numpy as np
import pytest
from scipy import special, stats
from scipy.stats import qmc

from rfbench.compute.features import registry
from rfbench.compute.features.base import Draw, Projections
from rfbench.compute.features.registry import make_weights, weights_samplers
from rfbench.compute.features.weights import mc
from rfbench.compute.features.weights.qmc import korobov_generator, korobov_vector, riesz_directions
from rfbench.compute.features.weights.structured import (
    circulant_apply,
    hd_product,
    normalised_hadamard,
    padded_dim,
)

WEIGHTS = weights_samplers()
ALL = sorted(WEIGHTS)
EXPECTED = {
    "iid", "orf", "simrf", "simrf-plus", "sorf", "fastfood", "scrf", "orf-fast", "simrf-fast",
    "halton", "sobol", "lattice", "mm", "ssf", "sgq", "sgq-sampled", "fitted",
}  # fmt: skip


def weights(name: str, d: int):
    """The coupling ``name``; one fitted to data (``@fitted``) fitted on anisotropic data in R^d."""
    w = make_weights(name)
    if not w.data_dependent:
        return w
    rng = np.random.default_rng(99)
    scale = np.linspace(1.5, 0.2, d)
    return w.fitted(rng.standard_normal((40, d)) * scale, rng.standard_normal((40, d)) * scale)


GAUSSIAN = [n for n in ALL if WEIGHTS[n].marginally_gaussian]
#: (name, options) of every rotation-invariant configuration
INVARIANT = [(n, {}) for n in ALL if WEIGHTS[n].rotation_invariant] + [
    ("simrf-plus", {"code_compat": True}),
    ("sgq", {"rotations": 1}),
]
N = 2000  # draws for the statistical tests
D, M = 5, 12  # m not a multiple of d, two blocks plus a partial one
Z = 5.0  # standard errors


@cache
def big_sample(name: str, d: int = D, m: int = M, draws: int = N, seed: int = 2024):
    return weights(name, d).sample(np.random.default_rng(seed), d, m, draws)


def simplex_gram(d: int) -> np.ndarray:
    """Gram matrix of d unit vectors with pairwise cosines −1/(d−1)."""
    return (1 + 1 / (d - 1)) * np.eye(d) - 1 / (d - 1)


def ks_p(sample: np.ndarray, cdf) -> float:
    return stats.kstest(sample, cdf).pvalue


# ------------------------------------------------------------------------------------ contract


def test_registry_holds_every_coupling():
    assert EXPECTED <= set(WEIGHTS)
    for name, cls in WEIGHTS.items():
        assert cls.name == name and cls.description and cls.paper
        assert isinstance(cls.marginally_gaussian, bool)
        assert isinstance(cls.rotation_invariant, bool)


@pytest.mark.parametrize("name", ALL)
def test_deterministic_under_a_fixed_seed(name):
    a = weights(name, 6).sample(np.random.default_rng(7), 6, 9, 3)
    b = weights(name, 6).sample(np.random.default_rng(7), 6, 9, 3)
    c = weights(name, 6).sample(np.random.default_rng(8), 6, 9, 3)
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.sq_norms, b.sq_norms)
    np.testing.assert_array_equal(a.quadrature_weights(), b.quadrature_weights())
    if name != "sgq":  # the plain sparse grid is deterministic by design
        assert not np.array_equal(a.W, c.W)
        assert not np.array_equal(a.W[0], a.W[1])  # draws are independent realisations


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize(("d", "m"), [(6, 9), (5, 12), (8, 3)])
def test_shapes_for_any_m(name, d, m):
    if name == "mm" and m <= d:
        pytest.skip("moment matching needs m > d (checked in the options test)")
    p = weights(name, d).sample(np.random.default_rng(1), d, m, 4)
    rows = 2 * d + 1 if WEIGHTS[name].fixed_count else m
    assert isinstance(p, Projections) and p.d == d
    assert p.W.shape == (4, rows, d) and p.sq_norms.shape == (4, rows)
    assert np.all(np.isfinite(p.W))
    np.testing.assert_allclose(p.sq_norms, np.sum(p.W**2, axis=-1), rtol=1e-12, atol=1e-12)
    assert p.quadrature_weights().shape[-1] == rows


def test_options_are_validated_and_passed_by_the_registry():
    with pytest.raises(ValueError, match="passes"):
        make_weights("simrf-plus", passes=-1)
    with pytest.raises(ValueError, match="code_compat"):
        make_weights("simrf-plus", code_compat="yes")
    with pytest.raises(ValueError, match="rotations"):
        make_weights("sgq", rotations=-2)
    with pytest.raises(ValueError, match="steps"):
        make_weights("ssf", steps=1.5)
    with pytest.raises(TypeError):
        make_weights("orf", passes=2)
    with pytest.raises(ValueError, match="m > d"):
        make_weights("mm").sample(np.random.default_rng(0), 6, 6, 2)
    with pytest.raises(ValueError, match="not rotation invariant"):
        make_weights("sorf").sample(np.random.default_rng(0), 6, 6, 2, frame=2)
    est = registry.get("trig@simrf-plus", m=6, weights_passes=2, weights_code_compat=True)
    assert est.weights.passes == 2 and est.weights.code_compat


# -------------------------------------------------------------------------- Gaussian marginals


def assert_moments_identity(W: np.ndarray) -> None:
    """Per row: mean 0 and E[ωωᵀ] = I within Z standard errors (Var ω_aω_b = 1 + δ_ab)."""
    n, _, d = W.shape
    tol_mean = Z / np.sqrt(n)
    tol_cov = Z * np.sqrt((1.0 + np.eye(d)) / n)
    assert tol_cov.max() < 0.5  # a variance off by a factor 2 (or 1/2) is caught
    assert np.all(np.abs(W.mean(axis=0)) < tol_mean)
    cov = np.einsum("nmi,nmj->mij", W, W) / n
    assert np.all(np.abs(cov - np.eye(d)) < tol_cov)


@pytest.mark.parametrize("name", GAUSSIAN)
def test_rows_are_marginally_standard_gaussian(name):
    p = big_sample(name)
    assert_moments_identity(p.W)
    for row in (0, M - 1):  # one row per draw: i.i.d. across draws
        assert ks_p(p.sq_norms[:, row], stats.chi2(D).cdf) > 1e-3
    # the KS test has power against a factor-2 variance error:
    assert ks_p(2.0 * p.sq_norms[:, 0], stats.chi2(D).cdf) < 1e-6


# importance-weighted couplings (@fitted) have E[a·M ωωᵀ] = I instead: test_fitted_coupling.py
APPROXIMATE = [
    n for n in ALL if n not in GAUSSIAN and n != "sgq" and not WEIGHTS[n].importance_weighted
]


@pytest.mark.parametrize("name", APPROXIMATE)
def test_approximate_couplings_have_identity_second_moments(name):
    """SORF, FastFood, fast ORF/SimRF, MM and sampled SGQ still have E[ω] = 0, E[ωωᵀ] = I."""
    assert_moments_identity(big_sample(name, d=4 if name != "mm" else D).W)


def test_unbiased_gaussian_kernel_for_marginally_gaussian_couplings():
    """Mean of trig@w over draws is within 5 s.e. of exp(−‖x−y‖²/2) (one pair, d = 5)."""
    x = np.array([[0.6, -0.3, 0.2, 0.5, 0.1]])
    y = np.array([[-0.2, 0.4, 0.1, 0.0, -0.3]])
    z2 = float(np.sum((x - y) ** 2))
    K, K_wrong = np.exp(-z2 / 2), np.exp(-z2)  # K_wrong: ω with variance 2 (bandwidth bug)
    for name in GAUSSIAN:
        est = registry.get(f"trig@{name}", kernel="gaussian", m=M)
        draw = Draw({"omega": big_sample(name)}, {}, D)  # the same law as est.sample(...)
        k_hat = est.estimate(draw, x, y)[:, 0, 0]
        se = k_hat.std(ddof=1) / np.sqrt(N)
        assert Z * se < abs(K - K_wrong) / 4, name
        assert abs(k_hat.mean() - K) < Z * se, name


# ------------------------------------------------------------------------ Haar and simplex laws


def unsigned_haar(rng, count, d, k=None):
    """The classic mistake: numpy QR without moving sign(diag R) into Q (not Haar)."""
    return np.linalg.qr(rng.standard_normal((count, d, d if k is None else k)))[0]


def orf_coordinate_pvalues() -> list[float]:
    """KS p-values of coordinates of ORF row directions against the law of u_1 on S^{d−1}."""
    d = 5
    p = make_weights("orf").sample(np.random.default_rng(11), d, d, 4000)
    U = p.W / np.sqrt(p.sq_norms)[..., None]
    beta = stats.beta((d - 1) / 2, (d - 1) / 2)  # (u_1 + 1)/2 for u uniform on S^{d−1}
    return [ks_p((U[:, i, j] + 1) / 2, beta.cdf) for i, j in [(0, 0), (2, 3), (4, 1)]]


def test_orf_rotations_are_haar():
    assert min(orf_coordinate_pvalues()) > 1e-3


def test_haar_test_rejects_qr_without_sign_correction(monkeypatch):
    monkeypatch.setattr(mc, "haar_frames", unsigned_haar)
    assert orf_coordinate_pvalues()[0] < 1e-10  # Q[0, 0] < 0 always without the correction


def test_simrf_blocks_are_regular_simplices_with_chi_norms():
    d, m = 6, 12
    p = make_weights("simrf").sample(np.random.default_rng(5), d, m, 3000)
    U = p.W / np.sqrt(p.sq_norms)[..., None]
    np.testing.assert_allclose(np.sum(U**2, -1), 1.0, atol=1e-12)
    for block in (slice(0, d), slice(d, 2 * d)):
        G = U[:, block] @ np.swapaxes(U[:, block], 1, 2)
        np.testing.assert_allclose(G, np.broadcast_to(simplex_gram(d), G.shape), atol=1e-12)
    across = np.einsum("ni,ni->n", U[:, 0], U[:, d])  # independent blocks: not −1/(d−1)
    assert np.abs(across + 0.2).max() > 0.5
    assert ks_p(np.sqrt(p.sq_norms[:, 0]), stats.chi(d).cdf) > 1e-3
    assert ks_p(np.sqrt(p.sq_norms[:, 7]), stats.chi(d).cdf) > 1e-3


def test_simrf_plus_closes_the_weighted_loop():
    d = 6
    plus = make_weights("simrf-plus").sample(np.random.default_rng(9), d, d, 500)
    simp = make_weights("simrf").sample(np.random.default_rng(9), d, d, 500)
    norms = np.sqrt(plus.sq_norms)
    assert np.all(norms.max(1) <= norms.sum(1) - norms.max(1))  # a closed loop exists
    resultant = np.linalg.norm(plus.W.sum(axis=1), axis=-1)  # ‖Σ w_i ŝ_iᵀR‖ = ‖Σ w_i ŝ_i‖
    assert resultant.max() < 1e-9 * norms.mean()
    assert np.median(np.linalg.norm(simp.W.sum(axis=1), axis=-1)) > 0.5  # SimRF does not
    U = plus.W / norms[..., None]
    np.testing.assert_allclose(np.sum(U**2, -1), 1.0, atol=1e-12)
    zero = make_weights("simrf-plus", passes=0).sample(np.random.default_rng(9), d, d, 5)
    G = (
        zero.W
        @ np.swapaxes(zero.W, 1, 2)
        / np.sqrt(zero.sq_norms[:, :, None] * zero.sq_norms[:, None])
    )
    np.testing.assert_allclose(G, np.broadcast_to(simplex_gram(d), G.shape), atol=1e-12)


def test_simrf_plus_iteration_converges_from_simplex_start():
    norms = np.sqrt(np.random.default_rng(4).chisquare(6, size=(200, 6)))
    for passes, bound in ((1, 0.5), (5, 1e-9)):
        S = mc.simplex_plus_directions(norms, passes)
        res = np.linalg.norm(np.einsum("ci,cij->cj", norms, S), axis=-1)
        assert res.max() < bound * norms.mean()
    start = np.linalg.norm(norms @ mc.simplex_directions(6), axis=-1)
    assert np.median(start) > 0.5


@pytest.mark.parametrize("compat", [False, True])
def test_simrf_plus_norms_per_block(compat):
    d, m = 4, 10  # blocks of 4, 4 and 2 rows
    p = make_weights("simrf-plus", code_compat=compat).sample(np.random.default_rng(2), d, m, 50)
    same_norms = np.allclose(p.sq_norms[:, :d], p.sq_norms[:, d : 2 * d])
    G1 = p.W[:, :d] @ np.swapaxes(p.W[:, :d], 1, 2)
    G2 = p.W[:, d : 2 * d] @ np.swapaxes(p.W[:, d : 2 * d], 1, 2)
    assert same_norms == compat and np.allclose(G1, G2) == compat  # same D S′, fresh R
    if compat:
        np.testing.assert_allclose(p.sq_norms[:, 2 * d :], p.sq_norms[:, :2])
        assert not np.allclose(p.W[:, :d], p.W[:, d : 2 * d])


# ------------------------------------------------------------------------------------- frames


@pytest.mark.parametrize(("name", "options"), INVARIANT, ids=lambda v: str(v))
def test_frames_agree_in_law_with_full_sampling(name, options):
    d, m, k, n = 6, 9, 2, 1500
    w = make_weights(name, **options)
    full = w.sample(np.random.default_rng(21), d, m, n)
    frame = w.sample(np.random.default_rng(22), d, m, n, frame=k)
    rows = full.W.shape[1]
    assert frame.W.shape == (n, rows, k) and frame.d == d
    np.testing.assert_array_equal(frame.quadrature_weights(), full.quadrature_weights())
    Wf = full.W[:, :, :k]
    stats_full = [np.linalg.norm(Wf[:, 0], axis=-1), np.sum(Wf[:, 0] * Wf[:, 1], -1)]
    stats_frame = [
        np.linalg.norm(frame.W[:, 0], axis=-1),
        np.sum(frame.W[:, 0] * frame.W[:, 1], -1),
    ]
    stats_full.append(full.sq_norms[:, rows - 1])
    stats_frame.append(frame.sq_norms[:, rows - 1])
    for a, b in zip(stats_full, stats_frame, strict=True):
        assert stats.ks_2samp(a, b).pvalue > 1e-3
    assert np.all(frame.sq_norms >= np.sum(frame.W**2, -1) - 1e-12)


# ------------------------------------------------------------------------ structured couplings


def test_hadamard_products_are_orthogonal():
    assert [padded_dim(d) for d in (1, 2, 3, 5, 8, 9, 64)] == [1, 2, 4, 8, 8, 16, 64]
    H = normalised_hadamard(8)
    np.testing.assert_allclose(H @ H.T, np.eye(8), atol=1e-14)
    R = hd_product(np.random.default_rng(0), 10, 8, 8)
    np.testing.assert_allclose(
        R @ np.swapaxes(R, 1, 2), np.broadcast_to(np.eye(8), R.shape), atol=1e-13
    )
    assert len({np.round(r, 12).tobytes() for r in R}) == 10


def test_sorf_rows_have_norm_sqrt_dprime_and_are_orthogonal():
    p = make_weights("sorf").sample(np.random.default_rng(0), 8, 16, 20)
    G = p.W[:, :8] @ np.swapaxes(p.W[:, :8], 1, 2)
    np.testing.assert_allclose(G, np.broadcast_to(8 * np.eye(8), G.shape), atol=1e-12)
    padded = make_weights("sorf").sample(np.random.default_rng(0), 5, 12, 20)
    assert padded.W.shape == (20, 12, 5) and np.all(padded.sq_norms <= 8 + 1e-12)


@pytest.mark.parametrize("name", ["orf-fast", "simrf-fast", "fastfood"])
def test_fast_blocks_have_chi_dprime_norms(name):
    """Full blocks (d = d′ = 8): row norms are exactly χ_8 (FastFood: the corrected S)."""
    d = 8
    p = weights(name, d).sample(np.random.default_rng(13), d, d, N)
    for row in (0, 5):
        assert ks_p(np.sqrt(p.sq_norms[:, row]), stats.chi(d).cdf) > 1e-3
        assert ks_p(np.sqrt(2 * p.sq_norms[:, row]), stats.chi(d).cdf) < 1e-6
    U = p.W / np.sqrt(p.sq_norms)[..., None]
    G = U @ np.swapaxes(U, 1, 2)
    if name == "orf-fast":
        np.testing.assert_allclose(G, np.broadcast_to(np.eye(d), G.shape), atol=1e-12)
    elif name == "simrf-fast":
        np.testing.assert_allclose(G, np.broadcast_to(simplex_gram(d), G.shape), atol=1e-12)


def test_scrf_blocks_are_signed_circulants():
    d, m = 6, 9
    p = make_weights("scrf").sample(np.random.default_rng(0), d, m, 5)
    A = np.abs(p.W[:, :d])
    for j in range(d):  # |row j| = |c| shifted by j: circ(c)_{jk} = c_{(j−k) mod d}
        np.testing.assert_array_equal(A[:, j], np.roll(A[:, 0], j, axis=-1))
    c = p.W[0, 0, (-np.arange(d)) % d] * p.W[0, 0, 0] / abs(p.W[0, 0, 0])  # row 0 → c (up to ε₀)
    circ = c[(np.arange(d)[:, None] - np.arange(d)[None, :]) % d]
    x = np.random.default_rng(1).standard_normal(d)
    np.testing.assert_allclose(circulant_apply(c, x), circ @ x, atol=1e-12)
    np.testing.assert_allclose(np.abs(circ), np.abs(p.W[0, :d]), atol=1e-15)


# ---------------------------------------------------------------------------------------- QMC


@pytest.mark.parametrize("name", ["halton", "sobol", "lattice"])
def test_qmc_draws_are_finite_distinct_and_reproducible(name):
    p = weights(name, 4).sample(np.random.default_rng(5), 4, 16, 300)
    assert np.all(np.isfinite(p.W))
    flat = p.W.reshape(300, -1)
    assert len({row.tobytes() for row in flat}) == 300  # re-randomised per draw
    again = weights(name, 4).sample(np.random.default_rng(5), 4, 16, 300)
    np.testing.assert_array_equal(p.W, again.W)


@pytest.mark.parametrize("name", ["sobol", "lattice"])
def test_qmc_points_are_stratified(name):
    """m = 16: every coordinate of a (0, m, d)-net / coprime lattice hits each [j/m, (j+1)/m)."""
    m, d = 16, 3
    p = weights(name, d).sample(np.random.default_rng(6), d, m, 50)
    cells = np.sort(np.floor(special.ndtr(p.W) * m), axis=1)
    np.testing.assert_array_equal(cells, np.broadcast_to(np.arange(m)[:, None], cells.shape))
    iid = make_weights("iid").sample(np.random.default_rng(6), d, m, 50)
    assert not np.array_equal(np.sort(np.floor(special.ndtr(iid.W) * m), axis=1), cells)


@pytest.mark.parametrize("name", ["sobol", "halton"])
def test_batched_qmc_points_are_each_uniform(name):
    """Every point of a randomised set is U[0, 1)^d (so Φ⁻¹ rows are N(0, I)): KS per coordinate
    of three rows across draws; the test rejects a squared (non-uniform) sample."""
    p = big_sample(name)
    t = special.ndtr(p.W)
    pvalues = [
        ks_p(t[:, row, j], stats.uniform.cdf) for row in (0, M // 2, M - 1) for j in range(D)
    ]
    assert min(pvalues) > 1e-4
    assert ks_p(t[:, 0, 0] ** 2, stats.uniform.cdf) < 1e-6


@pytest.mark.parametrize(("name", "engine"), [("sobol", qmc.Sobol), ("halton", qmc.Halton)])
def test_batched_qmc_keeps_low_discrepancy(name, engine):
    """Within a draw the points keep their structure: the centred L2 discrepancy of every draw is
    below a quarter of i.i.d. points' mean, and on average within 1.5x of scipy's scrambling."""
    d, m, draws = 4, 64, 30
    rng = np.random.default_rng(3)
    ours = special.ndtr(weights(name, d).sample(rng, d, m, draws).W)
    disc = np.array([qmc.discrepancy(t) for t in ours])
    iid = np.mean([qmc.discrepancy(rng.random((m, d))) for _ in range(draws)])
    scipy_scrambled = np.mean([qmc.discrepancy(engine(d, rng=rng).random(m)) for _ in range(draws)])
    assert disc.max() < iid / 4
    assert disc.mean() < 1.5 * scipy_scrambled


def test_sobol_scramble_keeps_the_net_of_the_bar_setting():
    """m = 128, d = 64: each coordinate of every draw hits each [i/m, (i+1)/m) once, and (a
    linear scramble permutes elementary intervals) every 2-D elementary box [·/2^a) × [·/2^b)
    with a + b ≤ 7 holds as many scrambled points as unscrambled ones, up to the box's label.
    A scramble that mixed lower digits into higher ones, or dropped L's diagonal, breaks this.
    Each draw has its own L: the image L g_q = x_{2^q} XOR x_0 differs between draws."""
    from rfbench.compute.features.weights.scrambling import sobol_points

    d, m, K = 64, 128, 7
    t = sobol_points(np.random.default_rng(11), d, m, 4)
    assert t.shape == (4, m, d) and t.min() > 0.0 and t.max() < 1.0
    cells = np.sort(np.floor(t * m), axis=1)
    np.testing.assert_array_equal(cells, np.broadcast_to(np.arange(m)[:, None], cells.shape))
    k = (np.ldexp(t, 52) - 0.5).astype(np.uint64)  # t = (k + ½)·2^-52 exactly
    for q in range(K):
        assert len(np.unique(k[:, 1 << q] ^ k[:, 0], axis=0)) == len(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = qmc.Sobol(d, scramble=False).random(m)

    def box_counts(x: np.ndarray, j: int, k: int, a: int, b: int) -> np.ndarray:
        box = np.floor(x[:, j] * 2**a) * 2**b + np.floor(x[:, k] * 2**b)
        return np.sort(np.bincount(box.astype(int), minlength=2 ** (a + b)))

    pairs = [(j, k) for j in range(0, d, 7) for k in range(j + 1, d, 5)]
    for j, k in pairs:
        for a in range(K + 1):
            for b in range(K + 1 - a):
                want = box_counts(plain, j, k, a, b)
                for x in t:
                    np.testing.assert_array_equal(box_counts(x, j, k, a, b), want)


@pytest.mark.parametrize("name", ["sobol", "halton"])
def test_batched_qmc_points_are_jointly_uniform_and_draws_independent(name):
    """A point's coordinate pairs are jointly U[0, 1)², and draws are independent: the points of
    row r in draws 2i and 2i + 1 are; chi-square on a 5 × 5 grid over 1000 pairs each. The test
    rejects pairs from one draw (the shared scramble makes them dependent)."""
    t = special.ndtr(big_sample(name).W)  # (N, M, D)

    def chi2_p(u: np.ndarray, v: np.ndarray) -> float:
        counts = np.histogram2d(u, v, bins=5, range=[[0, 1], [0, 1]])[0].ravel()
        return stats.chisquare(counts).pvalue

    pvalues = [chi2_p(t[::2, r, j], t[::2, r, k]) for r in (0, M - 1) for j, k in ((0, 1), (2, 4))]
    pvalues += [chi2_p(t[::2, r, j], t[1::2, r, j]) for r in (0, M // 2, M - 1) for j in range(D)]
    pvalues += [chi2_p(t[::2, 0, j], t[1::2, M - 1, (j + 1) % D]) for j in range(D)]
    assert min(pvalues) > 1e-4
    assert chi2_p(t[::2, 0, 0], t[::2, 1, 0]) < 1e-6


def test_halton_points_are_stratified_in_each_base():
    """Coordinate j (base b_j) of m = b_j^k
    scrambled Halton points hits each cell [i/m, (i+1)/m) once."""
    for j, m in ((0, 16), (1, 9), (2, 25)):
        p = make_weights("halton").sample(np.random.default_rng(9), 3, m, 20)
        cells = np.sort(np.floor(special.ndtr(p.W[..., j]) * m), axis=1)
        np.testing.assert_array_equal(cells, np.broadcast_to(np.arange(m), cells.shape))


def test_sobol_with_any_m_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = make_weights("sobol").sample(np.random.default_rng(0), 3, 12, 3)
    assert p.W.shape == (3, 12, 3)


def test_korobov_generator_is_a_unit_with_spread_points():
    for m, d in [(16, 3), (128, 8), (12, 5)]:
        a = korobov_generator(m, d)
        assert gcd(a, m) == 1 and a > 1
        z = korobov_vector(m, d, a)
        np.testing.assert_array_equal(z, [pow(a, k, m) for k in range(d)])


def test_moment_matching_whitens_each_draw():
    p = make_weights("mm").sample(np.random.default_rng(0), 5, 12, 20)
    np.testing.assert_allclose(p.W.mean(axis=1), 0.0, atol=1e-12)
    cov = np.swapaxes(p.W, 1, 2) @ p.W / 12
    np.testing.assert_allclose(cov, np.broadcast_to(np.eye(5), cov.shape), atol=1e-4)


def test_ssf_riesz_points_and_stratified_radii():
    V = riesz_directions(5, 4, 300)  # the Riesz-optimal 5 points on S³: a regular simplex
    np.testing.assert_allclose(V @ V.T, simplex_gram(5), atol=1e-6)
    ico = riesz_directions(12, 3, 300)  # 12 points on S²: the icosahedron, |cos| = 1/√5 or 1
    cos = np.abs((ico @ ico.T)[~np.eye(12, dtype=bool)])
    assert np.all(np.isclose(cos, 1 / np.sqrt(5), atol=1e-4) | np.isclose(cos, 1, atol=1e-4))
    d, m = 4, 5
    p = make_weights("ssf").sample(np.random.default_rng(0), d, m, 30)
    r = np.sqrt(p.sq_norms)
    shift = (stats.chi(d).cdf(r) * m) % 1.0  # one grid shift u per draw, shared by its rows
    np.testing.assert_allclose(shift, np.broadcast_to(shift[:, :1], shift.shape), atol=1e-8)
    U = p.W / r[..., None]  # each draw is a rotated copy of the fixed configuration V
    G = U @ np.swapaxes(U, 1, 2)
    np.testing.assert_allclose(G, np.broadcast_to(V @ V.T, G.shape), atol=1e-10)


# -------------------------------------------------------------------------------- quadrature


@pytest.mark.parametrize("rotations", [0, 2, "auto"])
def test_sgq_is_exact_to_degree_three(rotations):
    d, m = 5, 30
    p = make_weights("sgq", rotations=rotations).sample(np.random.default_rng(0), d, m, 4)
    K = {0: 0, 2: 2, "auto": 3}[rotations]
    assert p.W.shape[1] == max(K, 1) * (2 * d + 1)
    a = p.quadrature_weights()[0]
    assert np.isclose(a.sum(), 1.0) and a.min() < 0  # a₀ = 1 − d/3 < 0
    np.testing.assert_allclose(np.einsum("m,nmi->ni", a, p.W), 0.0, atol=1e-12)
    second = np.einsum("m,nmi,nmj->nij", a, p.W, p.W)
    np.testing.assert_allclose(second, np.broadcast_to(np.eye(d), second.shape), atol=1e-12)
    np.testing.assert_allclose(np.einsum("m,nmi->ni", a, p.W**3), 0.0, atol=1e-12)
    if rotations == 0:
        np.testing.assert_allclose(np.einsum("m,nmi->ni", a, p.W**4), 3.0)
        assert np.isclose(a[0], 1 - d / 3) and np.allclose(a[1:], 1 / 6)


def test_sgq_signed_weights_reach_the_estimate():
    d = 5
    x = np.array([[0.3, -0.2, 0.5, 0.1, 0.0]])
    y = np.array([[0.1, 0.2, -0.1, 0.4, -0.3]])
    est = registry.get("trig@sgq", kernel="gaussian", m=7)
    k_hat = est.estimate(est.sample(np.random.default_rng(0), d, draws=2), x, y)
    expected = (1 - d / 3) + np.sum(np.cos(np.sqrt(3) * (x - y))) / 3
    np.testing.assert_allclose(k_hat, expected, rtol=1e-12)


def test_sampled_sgq_entries_follow_the_three_point_rule():
    W = big_sample("sgq-sampled").W.ravel()
    n = W.size
    freq = np.array([np.mean(W < -1), np.mean(W == 0), np.mean(W > 1)])
    p = np.array([1, 4, 1]) / 6
    assert np.all(np.abs(freq - p) < Z * np.sqrt(p * (1 - p) / n))
    assert np.allclose(np.abs(W[W != 0]), np.sqrt(3))


@pytest.mark.parametrize(("d", "m", "draws"), [(6, 16, 50), (64, 128, 40), (33, 100, 50)])
def test_sobol_draw_without_the_guard_is_the_guarded_draw(d, m, draws):
    """Sobol' points are (k + ½)·2^-52, inside the guard: skipping it changes no bit; nor does
    taking Φ⁻¹ block by block as the points are written (several blocks here)."""
    from rfbench.compute.features.weights.ndtri import ndtri_inplace
    from rfbench.compute.features.weights.qmc import _T_HIGH, _T_LOW
    from rfbench.compute.features.weights.scrambling import sobol_points

    got = make_weights("sobol").sample(np.random.default_rng(3), d, m, draws).W
    t = sobol_points(np.random.default_rng(3), d, m, draws)
    np.testing.assert_array_equal(np.clip(t, _T_LOW, _T_HIGH), t)
    np.testing.assert_array_equal(got, ndtri_inplace(t))
