"""Closed-form theory of coupled RFs (SimRF; docs/methods.md#coupled-mse,
docs/experiments.md#simrf): reference values, identities, MC."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln, hyp1f1

from rfbench.compute.features import registry, theory
from rfbench.compute.features.theory import basic
from rfbench.compute.features.theory import conformity as F
from rfbench.compute.features.theory import coupled as C
from rfbench.compute.features.weights.mc import simplex_directions, simplex_plus_directions
from rfbench.compute.kernels import kernel_matrix, sq_norms


def assert_printed(value: float, printed: str) -> None:
    """``value`` rounds to the printed decimal string (half a unit in its last digit)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    assert abs(value - float(printed)) <= 0.5 * 10.0**-decimals * (1 + 1e-9), (value, printed)


# --- reference values printed in the spec ------------------------------------------------------

CONFORMITY_TABLE = [  # SimRF Eqs. 18-24; docs/methods.md#rf-conformity: d, v, ρ_IID, ρ_ORF, ρ_SimRF
    (3, 1.0, ("2.718281828", "2.513357668", "1.732710704")),
    (6, 0.5, ("1.284025417", "1.279255257", "1.223226224")),
    (6, 1.0, ("2.718281828", "2.579561821", "2.181826061")),
    (16, 0.3, ("1.094174284", "1.093930312", "1.087617245")),
    (16, 2.0, ("54.59815003", "39.45429158", "31.58326788")),
]


@pytest.mark.parametrize("d, v, printed", CONFORMITY_TABLE)
def test_conformity_reference_table(d, v, printed):
    for coupling, ref in zip(C.COUPLINGS, printed, strict=True):
        assert_printed(float(C.rf_conformity(coupling, d, v)), ref)
        # the power series (|s| ≤ 4) and the quadrature agree
        c = C.coupling_cosine(coupling, d)
        if c is not None:
            series = np.exp(v**2) - C.deficit(d, c, v**2)
            assert series == pytest.approx(float(C.rf_conformity(coupling, d, v)), rel=1e-13)


# SimRF Sec. 5.1, Fig. 6; docs/experiments.md#simrf-fig6: v, ORF/IID, SimRF/IID at d = m = 64
FIG6_TABLE = [
    (0.001, "0.99999952", "0.0077818"),
    (0.01, "0.999952", "0.0077859"),
    (0.1, "0.99525", "0.008214"),
    (0.3, "0.95906", "0.012827"),
    (0.5, "0.89576", "0.027771"),
    (1.0, "0.73109", "0.17050"),
    (1.5, "0.73741", "0.49569"),
    (2.0, "0.87876", "0.81761"),
    (3.0, "0.99698", "0.99641"),
]


@pytest.mark.parametrize("v, orf, simrf", FIG6_TABLE)
def test_fig6_mse_ratios(v, orf, simrf):
    assert_printed(float(C.mse_ratio("orf", 64, 64, v)), orf)
    assert_printed(float(C.mse_ratio("simrf", 64, 64, v)), simrf)


def test_fig6_saturation():
    assert_printed(1e10 * (1 - float(C.mse_ratio("orf", 64, 64, 5.0))), "8.3")
    assert_printed(1e10 * (1 - float(C.mse_ratio("simrf", 64, 64, 5.0))), "8.4")
    for coupling in ("orf", "simrf"):
        assert np.all(C.mse_ratio(coupling, 64, 64, [10.0, 20.0, 50.0, 100.0]) == 1.0)


def test_small_v_prefactor():
    for d, printed in [(64, "0.0077817"), (6, "0.0796"), (16, "0.0307"), (128, "0.0039")]:
        assert_printed(C.small_v_ratio(d), printed)
        # the spec's closed form (SimRF Sec. 5.1; docs/methods.md#simrf-small-v) equals the v → 0
        # limit of the Eq. 24 series
        assert float(C.mse_ratio("simrf", d, d, 0.0)) == pytest.approx(C.small_v_ratio(d), 1e-9)
    for m in (2, 5, 9):  # general m ≤ d: the correction scales with (m-1)/(d-1)
        assert float(C.mse_ratio("simrf", 12, m, 1e-4)) == pytest.approx(
            C.small_v_ratio(12, m), rel=1e-6
        )
    # ORF → 1 as v → 0; Cor. 3.3 ordering SimRF < ORF < IID
    v = np.linspace(0.05, 3.5, 50)
    for d in (2, 3, 6, 64):
        orf, sim = C.mse_ratio("orf", d, d, v), C.mse_ratio("simrf", d, d, v)
        assert np.all(sim < orf) and np.all(orf < 1)
    assert float(C.mse_ratio("orf", 64, 64, 1e-6)) == pytest.approx(1.0, abs=1e-9)


def test_fig4_conformity_reproduces_spec_run():
    # SimRF Fig. 4; docs/experiments.md#simrf-fig4 "my run": one draw of χ_6 norms; default_rng(3)
    # reproduces it to every digit.
    rng = np.random.default_rng(3)
    norms = np.sqrt(rng.chisquare(6, size=6))
    out = F.fig4_conformities(norms, 1.0, rng)
    assert_printed(out["iid"][0], "2.734")
    assert_printed(out["iid"][1], "0.255")
    assert_printed(out["orf"], "2.625")
    assert_printed(out["simrf"], "2.243")
    assert_printed(out["simrf-plus"][-1], "2.179")
    assert abs(out["simrf-plus"][2] - out["simrf-plus"][-1]) < 1e-4  # converged after 2 passes
    assert_printed(out["optimum"], "2.112")
    assert out["simrf-plus"][0] == out["simrf"]
    # SimRF+ closes the weighted loop (docs/methods.md#simrf)
    assert np.linalg.norm(norms @ simplex_plus_directions(norms[None], 5)[0]) < 1e-12


def test_config_conformity_averages_to_closed_form():
    rng = np.random.default_rng(7)
    n, d, v = 4000, 6, 1.0
    norms = np.sqrt(rng.chisquare(d, size=(n, d)))
    for coupling, directions in (("orf", np.eye(d)), ("simrf", simplex_directions(d))):
        vals = F.config_conformity(norms[..., None] * directions, v)
        se = vals.std() / np.sqrt(n)
        exact = float(C.rf_conformity(coupling, d, v))
        assert abs(vals.mean() - exact) < 5 * se
        assert 5 * se < 0.1 * (exact - 1)  # resolves the e^{v²}-vs-ρ differences of interest


# --- identities ---------------------------------------------------------------------------------


def test_orthogonality_gap_series():
    # Cor. 4.4 / Eq. 25 summed directly, with the product form of the bracket
    d, m = 6, 5
    x = np.array([0.4, 0.1, 0, 0, 0, 0.2])
    y = np.array([0.3, -0.2, 0.1, 0, 0, 0])
    v2 = float(np.sum((x + y) ** 2))
    total = 0.0
    for k in range(80):
        bracket = 1 - np.prod([(d + l) / (d + 2 * l) for l in range(k)])
        total += v2**k / np.exp(gammaln(k + 1)) * bracket
    expected = np.exp(-2 * (x @ x) - 2 * (y @ y)) * (m - 1) / m * total
    got = float(C.prf_orthogonality_gap(d, m, x, y))
    assert got == pytest.approx(expected, rel=1e-12)
    assert np.all(C.prf_orthogonality_gap(d, d, np.linspace(0.01, 3, 40)[:, None] * x, y) > 0)


def test_rff_closed_forms():
    z = np.array([0.3, 1.0, 2.0, 4.5, 7.0])
    x = np.zeros((z.size, 8))
    x[:, 0] = z
    y = np.zeros(8)
    e = np.exp(-(z**2))
    np.testing.assert_allclose(C.mse("trig", "iid", x, y, 8), (1 - e) ** 2 / 16, rtol=1e-13)
    gap = 7 / 8 * (e - hyp1f1(8, 4, -(z**2) / 2))  # Thm 4.5 with scipy's 1F1
    np.testing.assert_allclose(C.rff_orthogonality_gap(8, 8, z), gap, rtol=1e-9, atol=1e-17)
    np.testing.assert_allclose(
        C.mse("trig", "iid", x, y, 8) - C.mse("trig", "orf", x, y, 8), gap, rtol=1e-9, atol=1e-17
    )
    # Cor. 4.6: e^{-z²} - ρ_ORF = z⁴ e^{-z²}/(2d) + O(1/d²)
    for zz in (0.5, 1.0, 2.0):
        errs = []
        for d in (100, 1000, 10000):
            g = float(C.deficit(d, 0.0, -(zz**2)))
            errs.append(d**2 * abs(g - zz**4 * np.exp(-(zz**2)) / (2 * d)))
        assert max(errs) < 2 * min(errs) + 1e-3


def test_rff_sign_change_and_spec_mc_values():
    # SimRF Sec. 4.1; docs/methods.md#rff-coupled: first z with a negative ORF gap (the spec scanned
    # a grid of step 0.02)
    for d, printed in [(4, 3.1), (8, 2.96), (16, 3.28), (64, 6.92)]:
        z = np.linspace(2.0, 8.0, 60001)
        root = z[np.argmax(C.rff_orthogonality_gap(d, d, z) < 0)]
        assert printed - 0.02 < root <= printed
    # SimRF Sec. 4.1; docs/methods.md#rff-coupled: d = 64, z = 1, m = d (spec's MC): ORF 3.08e-4,
    # SimRF 3.53e-4, IID 3.13e-3
    x, y = np.eye(64)[0], np.zeros(64)
    vals = {c: float(C.mse("trig", c, x, y, 64)) for c in C.COUPLINGS}
    for c, ref in (("orf", 3.08e-4), ("simrf", 3.53e-4), ("iid", 3.13e-3)):
        assert vals[c] == pytest.approx(ref, rel=0.02)
    assert vals["simrf"] > vals["orf"]  # simplex RFFs are worse than ORF RFFs


def test_stacked_blocks():
    d, v = 6, 1.1
    block = float(C.mse_ratio("simrf", d, d, v))
    x, y = np.full(d, 0.2), np.full(d, 0.25)
    for n in (2, 3, 7):  # m = n d: MSE(m) = MSE_block(d)/n
        for comp in C.COMPONENTS:
            for coupling in C.COUPLINGS:
                assert C.mse(comp, coupling, x, y, n * d) == pytest.approx(
                    C.mse(comp, coupling, x, y, d) / n, rel=1e-12
                )
    assert C.coupled_pairs(9, 6) == 36 and C.coupled_pairs(4, 6) == 12
    # m = 9: one full block + 3 rows: ratio = 1 - (P/m)/(m-1) (1 - block ratio)
    assert float(C.mse_ratio("simrf", d, 9, v)) == pytest.approx(1 - 36 / 9 / 5 * (1 - block))


def test_registered_names():
    for name in ("positive@orf", "positive@simrf", "trig@orf", "trig@simrf"):
        assert theory.has_theory(name)
    for name in ("hyperbolic@orf", "hyperbolic@simrf"):
        assert theory.has_theory(name)
    assert not theory.has_theory("positive@simrf-plus")  # weight-dependent: no closed form


def test_iid_matches_basic_formulas():
    rng = np.random.default_rng(1)
    x, y = 0.5 * rng.standard_normal((2, 10, 5))
    for comp, fn in (
        ("positive", basic.positive_mse),
        ("trig", basic.trig_mse),
        ("hyperbolic", basic.hyperbolic_mse),
    ):
        np.testing.assert_allclose(C.mse(comp, "iid", x, y, 7, kernel="softmax"), fn(7, x, y))


@pytest.mark.parametrize("d", [6, 64])
def test_large_v_stability(d):
    v = np.linspace(0.001, 20.0, 120)
    for comp in ("positive", "hyperbolic"):
        orf, sim = C.mse_ratio("orf", d, d, v, comp), C.mse_ratio("simrf", d, d, v, comp)
        for r in (orf, sim):
            assert np.all(np.isfinite(r)) and np.all(r > 0) and np.all(r <= 1 + 1e-15)
            assert np.all(np.diff(r[v >= 2.0]) >= -1e-15)  # monotone towards 1
        if comp == "positive":
            assert np.all(np.diff(sim) > -1e-15)  # the SimRF ratio rises monotonically
    trig = C.mse_ratio("orf", d, d, v, "trig")
    assert np.all(np.isfinite(trig)) and np.all(trig > 0)
    # log ρ_ORF = log 1F1(d; d/2; v²/2) at large v, across the Kummer switch, against mpmath
    for vv in (30.0, 34.6, 34.7, 40.0):
        ref = mp.log(mp.hyp1f1(d, mp.mpf(d) / 2, mp.mpf(vv) ** 2 / 2))
        assert float(C.log_conformity(d, 0.0, vv**2)) == pytest.approx(float(ref), rel=1e-13)
    assert np.all(np.isfinite(C.log_conformity(d, -1 / (d - 1), np.array([900.0, 1600.0]))))
    x = np.full(d, 10.0 / np.sqrt(d))  # v = 20: the softmax MSE is finite in log space
    for coupling in C.COUPLINGS:
        assert np.isfinite(C.mse("positive", coupling, x, x, d, kernel="softmax"))


def test_pair_norm_densities():
    d = 6
    w = np.linspace(0.0, 25.0, 5001)
    for coupling in C.COUPLINGS:
        p = F.pair_norm_density(coupling, d, w)
        assert np.trapezoid(p, w) == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(
        F.pair_norm_density("orf", d, w), stats.chi(2 * d).pdf(w), rtol=1e-10, atol=1e-300
    )
    # E_p[f(w, v)] = ρ (Eq. 10 with Eq. 20 = Eq. 24)
    p = F.pair_norm_density("simrf", d, w)
    rho = np.trapezoid(p * F.pair_conformity_integrand(d, w, 1.0), w)
    assert_printed(rho, "2.181826061")
    # and the mean of ‖ω_i + ω_j‖ under the SimRF sampler matches the density
    est = registry.get("positive@simrf", m=2)
    W = est.sample(np.random.default_rng(2), d=d, draws=20000).projections["omega"].W
    wij = np.linalg.norm(W[:, 0] + W[:, 1], axis=-1)
    mean = np.trapezoid(w * p, w)
    assert abs(wij.mean() - mean) < 5 * wij.std() / np.sqrt(wij.size)
    assert abs(mean - np.trapezoid(w * F.pair_norm_density("orf", d, w), w)) > 0.2


def test_optimality_statements():
    # SimRF Thm 3.4; docs/methods.md#coupled-mse footnote 4: the expansion ratio E(w_ij⁴)/E(w_ij²)
    # of orthogonal pairs is 2d + 2
    w = np.linspace(0.0, 40.0, 8001)
    for d in (6, 16):
        p = F.pair_norm_density("orf", d, w)
        assert np.trapezoid(w**4 * p, w) / np.trapezoid(w**2 * p, w) == pytest.approx(2 * d + 2)
    # SimRFs+ minimises the k ≤ 1 truncation Σ_{i≠j} ‖w_i + w_j‖² = 2(m-2)Σ w_i² + 2‖Σ w_i‖²
    rng = np.random.default_rng(4)
    for _ in range(5):
        norms = np.sqrt(rng.chisquare(6, size=6))

        def truncated(W):  # over ordered pairs i ≠ j
            return sq_norms(W[:, None, :] + W[None, :, :]).sum() - 4 * sq_norms(W).sum()

        W_plus = norms[:, None] * simplex_plus_directions(norms[None])[0]
        W_simp = norms[:, None] * simplex_directions(6)
        assert truncated(W_plus) == pytest.approx(2 * 4 * np.sum(norms**2))
        assert truncated(W_plus) < truncated(W_simp) < truncated(np.diag(norms))


def test_gram_expectation_spec_values_and_scaling():
    # SimRF Sec. 5.2, Fig. 7; docs/experiments.md#simrf-fig7: expected error / d² at m = d = N = 64,
    # σ = 0.1 (spec: mean of 10 data draws)
    rng = np.random.default_rng(0)
    draws = [0.1 * rng.standard_normal((64, 64)) for _ in range(40)]
    for coupling, printed in (("iid", 0.0150), ("orf", 0.0109), ("simrf", 0.0050)):
        vals = np.array([C.gram_frobenius_expectation(coupling, X, 64) for X in draws]) / 64**2
        # the spec's value is itself a 10-draw mean: allow 3 of its standard errors + rounding
        assert abs(vals.mean() - printed) < 3 * vals.std() / np.sqrt(10) + 5e-5
        assert C.gram_frobenius_expectation(coupling, draws[0], 256) == pytest.approx(
            C.gram_frobenius_expectation(coupling, draws[0], 64) / 4, rel=1e-12
        )


def test_gram_expectation_monte_carlo():
    rng = np.random.default_rng(5)
    X = 0.3 * rng.standard_normal((4, 6))
    K = kernel_matrix("gaussian", X, X)
    est = registry.get("positive@simrf", kernel="gaussian", m=6)
    err = np.sum((est.estimate(est.sample(rng, d=6, draws=40000), X, X) - K) ** 2, axis=(1, 2))
    exact = C.gram_frobenius_expectation("simrf", X, 6)
    se = err.std() / np.sqrt(err.size)
    assert abs(err.mean() - exact) < 5 * se and 5 * se < 0.5 * exact


# --- Monte Carlo against the registry estimators ------------------------------------------------

MC_POINTS = [  # d, m, r, θ
    (6, 4, 0.6, np.pi / 3),  # m < d
    (6, 6, 0.5, np.pi / 4),  # m = d
    (6, 9, 0.6, 2 * np.pi / 3),  # m not a multiple of d
    pytest.param(64, 64, 0.5, np.pi / 2, marks=pytest.mark.slow),  # in a d×2 frame
]
KERNELS = ("softmax", "gaussian")
MC_ESTIMATORS = [
    "positive@iid",
    "positive@orf",
    "positive@simrf",
    "trig@orf",
    "trig@simrf",
    "hyperbolic@orf",
    "hyperbolic@simrf",
]


def empirical_mse(name: str, d: int, m: int, r: float, theta: float, seed: int, kernels=KERNELS):
    """{kernel: (MC MSE, its SE, theory MSE)} from one batch of draws shared by the kernels."""
    frame = 2 if d > 6 else None  # rotation-invariant couplings: draw a d×2 frame
    x, y = theory.equal_norm_pair(r, theta, frame or d)
    xf, yf = theory.equal_norm_pair(r, theta, d)
    draw = registry.get(name, m=m).sample(np.random.default_rng(seed), d, 20000, frame=frame)
    out = {}
    for kernel in kernels:
        est = registry.get(name, kernel=kernel, m=m)
        k_hat = est.estimate(draw, x[None], y[None])[:, 0, 0]
        sq = (k_hat - kernel_matrix(kernel, x[None], y[None])[0, 0]) ** 2
        out[kernel] = sq.mean(), sq.std() / np.sqrt(sq.size), float(theory.mse(est, xf, yf))
    return out


@pytest.mark.parametrize("d, m, r, theta", MC_POINTS)
@pytest.mark.parametrize("name", MC_ESTIMATORS)
def test_monte_carlo_matches_theory(name, d, m, r, theta):
    for kernel, (mean, se, exact) in empirical_mse(name, d, m, r, theta, 100 * d + m).items():
        assert abs(mean - exact) < 5 * se, (kernel, mean, exact, se)
        assert 5 * se < 0.5 * exact  # a factor-2 error in the theory would fail


def test_monte_carlo_ordering_simrf_orf_iid():
    # d = m = 64, v = 1 (r = 1/√2, θ = π/2): theory ratios 0.17 and 0.73
    r, theta = 1 / np.sqrt(2), np.pi / 2
    res = {
        c: empirical_mse(f"positive@{c}", 64, 64, r, theta, 11, ("gaussian",))["gaussian"]
        for c in C.COUPLINGS
    }
    for lo, hi in (("simrf", "orf"), ("orf", "iid")):
        (m_lo, se_lo, t_lo), (m_hi, se_hi, t_hi) = res[lo], res[hi]
        assert t_hi - t_lo > 5 * np.hypot(se_lo, se_hi)  # significant by theory
        assert m_lo < m_hi
        assert abs(m_lo - t_lo) < 5 * se_lo
