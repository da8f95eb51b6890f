"""Hybrid estimators (HRF Sec. 2.2–2.4, App. C–H; CSE): feature maps, moments, MSE vs theory."""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.features import registry, theory
from rfbench.compute.features.base import Draw, bilinear_estimate
from rfbench.compute.features.registry import list_estimators
from rfbench.compute.features.theory import equal_norm_pair
from rfbench.compute.features.theory import hybrid as th

X = np.array([[0.5, -0.2, 0.3], [0.1, 0.6, -0.2], [-0.4, 0.1, 0.2]])
Y = np.array([[-0.3, 0.2, 0.5], [0.2, 0.1, 0.1]])


def pair(nx: float, ny: float, theta: float, d: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.zeros(d), np.zeros(d)
    x[0], y[0], y[1] = nx, ny * np.cos(theta), ny * np.sin(theta)
    return x, y


def mc(est, x, y, N, seed=0, frame=None):
    """N independent estimates of K(x, y)."""
    draw = est.sample(np.random.default_rng(seed), len(x), draws=N, frame=frame)
    return est.estimate(draw, x[: frame or len(x)], y[: frame or len(y)])[:, 0, 0]


def check_mse(k, K, mse, other=None):
    """|MC MSE - theory| < 5 SE (SE from the squared errors), tight enough for a factor 2 and,
    if ``other`` is given, to reject that competing value. Returns the MC/theory ratio."""
    err2 = (k - K) ** 2
    se = err2.std() / np.sqrt(len(k))
    assert 5 * se < 0.5 * mse
    assert abs(err2.mean() - mse) < 5 * se, (err2.mean() / mse, se / mse)
    if other is not None:
        assert abs(err2.mean() - other) > 5 * se, (err2.mean(), other, se)
    return err2.mean() / mse


# ---------------------------------------------------------------- feature map = direct form


def agree(est, draw, Xq, Yk, cancellation=False):
    """Feature-map product = direct estimate to 1e-10 relative; with ``cancellation`` (large
    inputs, where trig terms of size e^{‖x‖²} cancel) relative to Σ_f |φ_f ψ_f| instead."""
    Phi, Psi = est.query_features(draw, Xq), est.key_features(draw, Yk)
    direct = est.estimate(draw, Xq, Yk)
    product = np.einsum("bnf,bmf->bnm", Phi, Psi).real
    if cancellation:
        scale = np.einsum("bnf,bmf->bnm", np.abs(Phi), np.abs(Psi))
        assert np.all(np.abs(product - direct) <= 1e-12 * scale)
    else:
        np.testing.assert_allclose(product, direct, rtol=1e-10)
    return Phi


@pytest.mark.parametrize("variant", ["independent", "shared-base", "shared-all"])
@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
@pytest.mark.parametrize("weights", ["iid", "orf"])
def test_angular_feature_map(variant, kernel, weights):
    """Lemma 2.3 (HRF Sec. 2.4, Eq. 19, Lemma 3.2; docs/methods.md#hrf-angular-hybrid): real
    asymmetric map of dimension 4m(n+1) = direct form."""
    m, n = 5, (5 if variant == "shared-all" else 3)
    est = registry.get(f"angular-hybrid@{weights}", kernel=kernel, m=m, n=n, variant=variant)
    draw = est.sample(np.random.default_rng(1), 3, draws=4)
    Phi = agree(est, draw, X, Y)
    assert Phi.shape == (4, 3, 4 * m * (n + 1)) and np.isrealobj(Phi)
    # the feature map lives in log space: large inputs stay finite
    big = agree(est, draw, 6 * X, 6 * Y, cancellation=True)
    assert np.all(np.isfinite(big))


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
def test_gaussian_feature_map(normalized, kernel):
    m, n = 4, 3
    est = registry.get("gaussian-hybrid@iid", kernel=kernel, m=m, n=n, sigma=0.7,
                       normalized=normalized, variant="shared-base")  # fmt: skip
    draw = est.sample(np.random.default_rng(2), 3, draws=4)
    Phi = agree(est, draw, X, Y)
    # blocks 2m, 2m·2n, 2m, 2m·2n; a = 1 (not normalized) drops the (1 - a) block
    assert Phi.shape[-1] == (4 * m * (2 * n + 1) if normalized else 2 * m * (4 * n + 1))


def test_lambda_hat_forms():
    """Angular λ̂ = #{sign disagreements}/n ∈ {0, 1/n, …, 1}; Gaussian λ̂ = (1 - K̂)/ρ (Eq. 69)."""
    est = registry.get("angular-hybrid@iid", m=4, n=5)
    draw = est.sample(np.random.default_rng(3), 3, draws=6)
    lam = est.lambda_hat(draw, X, Y)
    T = draw.projections["tau"].W
    disagree = (
        np.sign(X @ np.swapaxes(T, 1, 2))[:, :, None, :]
        != np.sign(Y @ np.swapaxes(T, 1, 2))[:, None, :, :]
    )
    np.testing.assert_allclose(lam, disagree.mean(-1), atol=1e-15)
    g = registry.get("gaussian-hybrid@iid", m=4, n=5, sigma=0.8, radius=0.9)
    draw = g.sample(np.random.default_rng(3), 3, draws=6)
    T = draw.projections["tau"].W
    delta = X[:, None, :] - Y[None, :, :]
    khat = np.cos(0.8 * np.einsum("nmd,bkd->bnmk", delta, T)).mean(-1)
    np.testing.assert_allclose(g.lambda_hat(draw, X, Y), (1 - khat) / g.rho, atol=1e-13)


# ---------------------------------------------------------------- moments, bias, MSE


@pytest.mark.parametrize("theta", [0.4, 1.5, 2.9])
def test_lemma_32_moments(theta):
    """n·λ̂ ~ Binomial(n, θ/π): E[λ̂] and E[λ̂²] (HRF Lemma 3.2), tolerance 5 SE."""
    n, N = 6, 40_000
    est = registry.get("angular-hybrid@iid", m=2, n=n)
    x, y = pair(1.0, 0.7, theta, 4)
    lam = est.lambda_hat(est.sample(np.random.default_rng(4), 4, draws=N), x, y)[:, 0, 0]
    mom = th.angular_lambda_moments(theta / np.pi, n)
    assert abs(lam.mean() - mom.mean) < 5 * lam.std() / np.sqrt(N)
    assert abs((lam**2).mean() - mom.second) < 5 * (lam**2).std() / np.sqrt(N)
    assert lam.var() == pytest.approx(float(mom.var), rel=0.05)


ANGULAR_CASES = [  # d, ‖x‖, ‖y‖, θ, m, n   (m not a multiple of d in every case)
    (3, 0.6, 0.3, 2.5, 4, 2),
    (5, 1.0, 0.4, 1.2, 7, 4),
    (2, 0.8, 0.8, 2.0, 3, 5),
    (4, 0.7, 0.4, 0.7, 6, 8),
]


@pytest.mark.parametrize("case", ANGULAR_CASES)
def test_angular_unbiased_and_mse(case):
    """Thm 3.1 / Thm D.1: MC MSE of variants I and II vs theory; at unequal norms the MC MSE
    also rejects the other variant's formula."""
    d, nx, ny, theta, m, n = case
    x, y = pair(nx, ny, theta, d)
    K, N = np.exp(x @ y), 80_000
    ests = {v: registry.get("angular-hybrid@iid", m=m, n=n, variant=v)
            for v in ("independent", "shared-base")}  # fmt: skip
    mses = {v: float(theory.mse(e, x, y)) for v, e in ests.items()}
    for seed, (v, est) in enumerate(ests.items()):
        k = mc(est, x, y, N, seed=seed)
        assert abs(k.mean() - K) < 5 * np.sqrt(mses[v] / N) < 0.05 * K
        other = mses["shared-base" if v == "independent" else "independent"]
        check_mse(k, K, mses[v], other if nx != ny else None)


@pytest.mark.parametrize("variant", ["independent", "shared-base"])
def test_angular_endpoints_exact(variant):
    """Equal norms: θ = 0 (λ̂ = 0, trig exact) and θ = π (λ̂ = 1, SM⁺⁺ exact) have zero error."""
    est = registry.get("angular-hybrid@iid", m=5, n=4, variant=variant)
    for theta in (0.0, np.pi):
        x, y = pair(0.9, 0.9, theta, 3)
        y[1] = 0.0  # exactly antipodal
        k = mc(est, x, y, 200)
        np.testing.assert_allclose(k, np.exp(x @ y), rtol=1e-12)


def test_angular_frames_pointwise_setting():
    """d = 64 drawn in 2-D frames (the pointwise experiment): ε = 0.3116 at r = 1, θ = π/2
    (HRF Fig. 2, App. G; docs/experiments.md#hrf-fig2) within MC error; ORF frames are accepted
    too."""
    est = registry.get("angular-hybrid@iid", m=16, n=8)
    x, y = equal_norm_pair(1.0, np.pi / 2, 64)
    k = mc(est, x, y, 40_000, frame=2)
    check_mse(k, 1.0, float(theory.mse(est, x, y)))
    orf = registry.get("angular-hybrid@orf", m=16, n=8)
    assert np.all(np.isfinite(mc(orf, x, y, 10, frame=2)))


@pytest.mark.slow
def test_shared_all_bias():
    """CSE variant S (τ_i = ω_i) is biased (docs/methods.md#cse-bias): the MC bias matches the
    quadrature of theory.hybrid.shared_all_bias (checked against the spec's m = n = 128 numbers in
    test_theory_reference); m = n = 16 here makes the bias (∝ 1/m) large and the test cheap.
    Variant I at the same point shows none."""
    x, y = equal_norm_pair(1.0, 2.5, 64)
    K, N, m = np.exp(x @ y), 20_000, 16
    bias = float(th.shared_all_bias(x, y, m))
    cse = registry.get("cse", m=m)
    assert cse.variant == "shared-all" and cse.n == m and not cse.unbiased
    k = mc(cse, x, y, N, seed=5, frame=2)
    se = k.std() / np.sqrt(N)
    assert abs(k.mean() - K - bias) < 5 * se < 0.5 * bias  # a factor-2 bias error is caught
    k1 = mc(registry.get("angular-hybrid@iid", m=m, n=m), x, y, N, seed=6, frame=2)
    assert abs(k1.mean() - K) < 5 * k1.std() / np.sqrt(N) < bias


GAUSS_CASES = [  # ‖x‖, ‖y‖, θ, σ, normalized, variant
    (0.7, 0.5, 1.9, 1.0, True, "independent"),
    (0.7, 0.5, 1.9, 1.0, True, "shared-base"),
    (0.6, 0.6, 2.6, 1.5, True, "independent"),
    (0.9, 0.3, 1.0, 1.0, False, "shared-base"),  # the LM code's variant
]


@pytest.mark.parametrize("case", GAUSS_CASES)
def test_gaussian_unbiased_and_mse(case):
    """HRF Thm F.1 (with Thm 3.1 II for shared ω): MC mean and MSE vs theory."""
    nx, ny, theta, sigma, normalized, variant = case
    est = registry.get("gaussian-hybrid@iid", m=5, n=3, sigma=sigma, radius=0.6,
                       normalized=normalized, variant=variant)  # fmt: skip
    x, y = pair(nx, ny, theta, 3)
    K, N = np.exp(x @ y), 80_000
    mse = float(theory.mse(est, x, y))
    k = mc(est, x, y, N, seed=7)
    assert abs(k.mean() - K) < 5 * np.sqrt(mse / N) < 0.05 * K
    check_mse(k, K, mse)


# ---------------------------------------------------------------- cluster hybrid


def clustered(rng, centres, count=40, spread=0.02):
    return np.concatenate([c + spread * rng.normal(size=(count, len(c))) for c in centres])


CQ = np.array([[0.5, 0.25, -0.25, 0.1], [-0.3, 0.4, 0.15, -0.2]])
CK = np.array([[0.3, -0.2, 0.4, 0.1], [-0.1, -0.35, -0.2, 0.3]])


def cluster_draw(seed=0, draws=3, **options):
    rng = np.random.default_rng(seed)
    Xf, Yf = clustered(rng, CQ), clustered(rng, CK)
    est = registry.get("cluster-hybrid", m=6, **options)
    return est, est.sample(rng, 4, draws=draws, fit=(Xf, Yf)), Xf, Yf


@pytest.mark.parametrize("diagonal", ["real", "complex"])
@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
def test_cluster_feature_map_and_blocks(diagonal, kernel):
    """Def. H.2: the masked feature map = the block-wise direct form; each block is the
    complex-exp estimator of its centre pair with the shared ω (HRF App. H.3;
    docs/experiments.md#hrf-fig6, step 8)."""
    est, draw, Xf, Yf = cluster_draw(diagonal=diagonal, kernel=kernel)
    Xs, Ys = Xf[::9], Yf[::7]
    Phi = agree(est, draw, Xs, Ys)
    assert Phi.shape[-1] == 4 * 6
    lx, ly = draw.params["query"].assign(Xs), draw.params["key"].assign(Ys)
    np.testing.assert_array_equal(lx, np.arange(len(Xf))[::9] >= 40)  # the fitted clusters
    K = est.estimate(draw, Xs, Ys)
    for i, j in ((0, 0), (0, 1), (1, 0), (1, 1)):
        comp = draw.params["pairs"][i][j]
        ce = registry.get("complex-exp@iid", kernel=kernel, m=6, diag=comp.diag)
        ref = ce.estimate(Draw({"omega": draw.projections["omega"]}, {}, 4), Xs, Ys)
        block = np.ix_(range(3), lx == i, ly == j)
        np.testing.assert_allclose(K[block], ref[block], rtol=1e-12)


def test_cluster_exact_at_centres_with_complex_A():
    """With the complex A of Eq. 86–87 the hybrid is exact at every centre pair (zero variance)."""
    est, draw, _, _ = cluster_draw(draws=200, diagonal="complex")
    C, D = draw.params["query"].centres, draw.params["key"].centres
    np.testing.assert_allclose(C, CQ, atol=0.02)
    k = est.estimate(draw, C, D)
    np.testing.assert_allclose(k, np.broadcast_to(np.exp(C @ D.T), k.shape), rtol=1e-10)


def test_cluster_mse_matches_theory():
    """Real A (Eq. 88): per pair MSE = (SM²/m)(e^{‖Ax + A⁻¹y‖²} - 1) (HRF Sec. 2.3, Lemma 2.4;
    docs/methods.md#complex-exp), MC-checked; at the centres ‖·‖² = 4Σ_{same sign} r_i r_j."""
    N = 60_000
    est, draw, Xf, Yf = cluster_draw(draws=N, seed=1)
    Xs, Ys = Xf[[3, 50]], Yf[[5, 60]]
    K = est.estimate(draw, Xs, Ys)
    lx, ly = draw.params["query"].assign(Xs), draw.params["key"].assign(Ys)
    for a, b in np.ndindex(2, 2):
        comp = draw.params["pairs"][lx[a]][ly[b]]
        z = comp.apply(Xs[a], "query") + comp.apply(Ys[b], "key")
        mse = float(th.complex_exp_mse(est.m, z, Xs[a] @ Ys[b]))
        check_mse(K[:, a, b], np.exp(Xs[a] @ Ys[b]), mse)
    ri, rj = draw.params["query"].centres[0], draw.params["key"].centres[1]
    A = draw.params["pairs"][0][1].diag.real
    same = ri * rj > 0
    assert np.sum((A * ri + rj / A) ** 2) == pytest.approx(4 * np.sum((ri * rj)[same]), rel=1e-9)


def test_cluster_errors():
    est = registry.get("cluster-hybrid", m=4)
    with pytest.raises(ValueError, match="fit"):
        est.sample(np.random.default_rng(0), 4)
    _, _, Xf, Yf = cluster_draw()
    with pytest.raises(ValueError, match="frame"):
        est.sample(np.random.default_rng(0), 4, fit=(Xf, Yf), frame=2)
    with pytest.raises(ValueError, match="no n"):
        registry.get("cluster-hybrid", m=4, n=3)


# ---------------------------------------------------------------- registry, determinism


def test_registry_names_and_flags():
    est = registry.get("angular-hybrid@orf", m=16)
    assert est.name == "angular-hybrid@orf" and est.n == 8 and est.variant == "independent"
    assert est.unbiased and registry.get("gaussian-hybrid", m=4).name == "gaussian-hybrid@iid"
    rows = {r.name: r for r in list_estimators()}
    assert not rows["cse"].estimator.unbiased and theory.has_theory(
        rows["angular-hybrid@iid"].theory_name
    )
    assert rows["cluster-hybrid@iid"].estimator.unbiased and not theory.has_theory(
        rows["cluster-hybrid@iid"].theory_name or ""
    )
    with pytest.raises(ValueError, match="variant"):
        registry.get("angular-hybrid", variant="both")
    with pytest.raises(ValueError, match="variant"):
        registry.get("gaussian-hybrid", variant="shared-all")
    with pytest.raises(ValueError, match="n <= m"):
        registry.get("cse", m=4, n=8)
    with pytest.raises(ValueError, match="kernel"):
        registry.get("angular-hybrid", kernel="angular")


@pytest.mark.parametrize(
    "name, options",
    [("angular-hybrid@iid", {}), ("cse", {}), ("gaussian-hybrid@orf", {}), ("cluster-hybrid", {})],
)
@pytest.mark.slow
def test_determinism(name, options):
    def run(seed):
        est = registry.get(name, m=4, **options)
        rng = np.random.default_rng(seed)
        fit = (clustered(rng, CQ[:, :3], 10), clustered(rng, CK[:, :3], 10))
        draw = est.sample(rng, 3, draws=2, fit=fit)
        return est.estimate(draw, X, Y)

    np.testing.assert_array_equal(run(3), run(3))
    assert not np.allclose(run(3), run(4))


@pytest.mark.parametrize("name", ["cluster-hybrid", "trig@iid", "positive@orf", "angular-hybrid"])
def test_estimate_blocks_make_up_the_estimate(name):
    """``estimate_blocks`` (docs/extending.md#capabilities): its blocks partition the pairs and
    their bilinear products are the estimate, bit for bit; None where the estimate is formed
    otherwise (the angular hybrid's direct form, trig's pair shortcut for a single query)."""
    est, draw, Xf, Yf = cluster_draw()
    if name != "cluster-hybrid":
        est = registry.get(name, m=6)
        draw = est.sample(np.random.default_rng(1), 4, draws=3)
    blocks = est.estimate_blocks(draw, Xf, Yf)
    if name == "angular-hybrid":
        assert blocks is None
        return
    assert len(blocks) == (4 if name == "cluster-hybrid" else 1)
    K, covered = np.full((3, len(Xf), len(Yf)), np.nan), np.zeros((len(Xf), len(Yf)), int)
    for rows, cols, query, key in blocks:
        block = np.ix_(range(3), np.arange(len(Xf))[rows], np.arange(len(Yf))[cols])
        K[block] = bilinear_estimate(query, key)
        covered[block[1:]] += 1
    assert np.all(covered == 1)
    np.testing.assert_array_equal(K, est.estimate(draw, Xf, Yf))
    if name == "trig@iid":
        assert est.estimate_blocks(draw, Xf[:1], Yf[:1]) is None
