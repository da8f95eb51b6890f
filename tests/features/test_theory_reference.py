"""Closed forms of the hybrids reproduce the specs' reference numbers to the printed digits.

Sources: HRF Fig. 2, App. G; docs/experiments.md#hrf-fig2 (pointwise table), HRF;
docs/methods.md#hrf-erratum-6 (Eq. 47 corrected), HRF Thm 3.1; docs/methods.md#hrf-sharing-variants
(Thm 3.1 I/II, Thm 3.5); CSE Lemma 3.4, Thm 3.5; docs/methods.md#hrf-max-error (bounds, limits,
ratios), CSE Sec. 3; docs/methods.md#cse (reference table), docs/methods.md#cse-bias (variant S
bias). No randomness here: every number comes from rfbench.compute.features.theory.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from rfbench.compute.features import registry, theory
from rfbench.compute.features.theory import equal_norm_pair
from rfbench.compute.features.theory import hybrid as th
from rfbench.compute.features.theory.basic import positive_mse, trig_mse

PI = np.pi


def assert_printed(value: float, printed: str, truncated: bool = False) -> None:
    """``value`` rounds (or, if ``truncated``, truncates) to ``printed``; "0" means exactly 0."""
    if printed == "0":
        assert abs(value) < 1e-12, (value, printed)
        return
    ulp = float(Decimal(10) ** Decimal(printed).as_tuple().exponent)
    lo, hi = (0.0, ulp) if truncated else (-0.5 * ulp, 0.5 * ulp)
    assert lo - 1e-9 * ulp <= value - float(printed) <= hi * (1 + 1e-9), (value, printed)


def angular(r: float, theta: float, m: int, n: int) -> float:
    """ε_{θ,r} through the registered general-norm formula (Thm D.1), not the sphere shortcut."""
    est = registry.get("angular-hybrid@iid", m=m, n=n)
    x, y = equal_norm_pair(r, theta, 4)
    return float(np.sqrt(theory.mse(est, x, y)) / np.exp(x @ y))


# HRF Fig. 2, App. G; docs/experiments.md#hrf-fig2: r, θ, SM, trig M=128, SM++ M=128, angular (16,
# 8), angular (32, 4)
HRF_TABLE = [
    (1.0, 0.0, "2.7183", "0", "0.4534", "0", "0"),
    (1.0, PI / 4, "2.0281", "0.0371", "0.3332", "0.2878", "0.2279"),
    (1.0, PI / 2, "1.0000", "0.1469", "0.1469", "0.3116", "0.2323"),
    (1.0, 3 * PI / 4, "0.4931", "0.3332", "0.0371", "0.2878", "0.2279"),
    (1.0, PI, "0.3679", "0.4534", "0", "0", "0"),
    (1.5, PI / 2, "1.0000", "0.5864", "0.5864", "1.2439", "0.9272"),
]
# max over θ: r, trig, SM++, angular (16, 8), angular (32, 4)
HRF_MAX = [
    (1.0, "0.4534", "0.4534", "0.3119", "0.2361"),
    (1.25, "1.4197", "1.4197", "0.7537", "0.6031"),
    (1.5, "5.6254", "5.6254", "2.5399", "2.0877"),
]


@pytest.mark.parametrize("row", HRF_TABLE)
def test_hrf_pointwise_table(row):
    r, theta, sm, trig, pp, ang16, ang32 = row
    assert_printed(np.exp(r**2 * np.cos(theta)), sm)
    assert_printed(th.trig_relative_error(theta, r, 128), trig)
    assert_printed(th.hyperbolic_relative_error(theta, r, 128), pp)
    assert_printed(angular(r, theta, 16, 8), ang16)
    assert_printed(angular(r, theta, 32, 4), ang32)


@pytest.mark.parametrize("row", HRF_MAX)
def test_hrf_max_relative_error(row):
    r, trig, pp, ang16, ang32 = row
    thetas = np.linspace(0, PI, 4001)
    assert_printed(np.max(th.trig_relative_error(thetas, r, 128)), trig)
    assert_printed(np.max(th.hyperbolic_relative_error(thetas, r, 128)), pp)
    assert_printed(th.W(r) / np.sqrt(256), trig)  # Eq. 26
    assert_printed(th.max_angular_relative_error(r, 16, 8)[0], ang16)
    assert_printed(th.max_angular_relative_error(r, 32, 4)[0], ang32)


# CSE Sec. 3; docs/methods.md#cse (m = n): at θ = π/6, π/3, π/2 (trig, ++, CSE); max ε(CSE) and its
# θ ≤ π/2
CSE_TABLE = {
    (1, 64): ([("0.02375", "0.5575", "0.0985"), ("0.09212", "0.3764", "0.1415"),
               ("0.2077", "0.2077", "0.1480")], "0.148", None),
    (1, 128): ([("0.0168", "0.3942", "0.06843"), ("0.06514", "0.2662", "0.09943"),
                ("0.1469", "0.1469", "0.1043")], "0.1043", None),
    (1, 256): ([("0.01188", "0.2788", "0.04795"), ("0.04606", "0.1882", "0.07008"),
                ("0.1039", "0.1039", "0.07359")], "0.07359", None),
    (2, 64): ([("0.09933", "154.2", "26.68"), ("0.6411", "35.66", "12.08"),
               ("4.824", "4.824", "3.438")], "26.74", "0.50"),
    (2, 128): ([("0.07024", "109.0", "18.52"), ("0.4534", "25.21", "8.476"),
                ("3.411", "3.411", "2.422")], "18.54", "0.505"),
    (2, 256): ([("0.04967", "77.09", "12.97"), ("0.3206", "17.83", "5.970"),
                ("2.412", "2.412", "1.709")], "12.98", "0.508"),
    (3, 64): ([("0.2687", "1.738e6", "3.008e5"), ("7.955", "6.447e4", "2.182e4"),
               ("716.2", "716.2", "510.4")], "3.994e5", "0.32"),
    (3, 128): ([("0.1900", "1.229e6", "2.088e5"), ("5.625", "4.559e4", "1.531e4"),
                ("506.4", "506.4", "359.5")], "2.739e5", "0.33"),
    (3, 256): ([("0.1343", "8.690e5", "1.462e5"), ("3.978", "3.224e4", "1.079e4"),
                ("358.1", "358.1", "253.7")], "1.907e5", "0.33"),
}  # fmt: skip


@pytest.mark.parametrize("key", sorted(CSE_TABLE))
def test_cse_reference_table(key):
    r, m = key
    cols, max_printed, argmax_printed = CSE_TABLE[key]
    for k, (trig, pp, cse) in enumerate(cols, start=1):
        for theta, (t_str, p_str) in ((k * PI / 6, (trig, pp)), (PI - k * PI / 6, (pp, trig))):
            assert_printed(th.trig_relative_error(theta, r, m), t_str)
            assert_printed(th.hyperbolic_relative_error(theta, r, m), p_str)
            assert_printed(angular(r, theta, m, m), cse)  # symmetric under θ -> π - θ
    value, where = th.max_angular_relative_error(r, m, m)
    assert_printed(value, max_printed)
    if argmax_printed is None:  # "(π/2)"
        assert where == pytest.approx(PI / 2, abs=1e-4)
    else:
        assert_printed(where, argmax_printed)


def test_cse_bounds_limits_and_ratios():
    """CSE Lemma 3.4, Thm 3.5; docs/methods.md#hrf-max-error at m = n = 128."""
    m = n = 128
    for r, paper, rigorous, ratio in ((1, "0.257", "0.257", "0.230"), (2, "52.7", "53.1", "0.0995"),
                                      (3, "7.7e5", "7.85e5", "0.0667")):  # fmt: skip
        worst = th.max_angular_relative_error(r, m, n)[0]
        assert_printed(th.thm35_bound(r, m, n, "paper"), paper)
        assert_printed(th.thm35_bound(r, m, n, "rigorous"), rigorous)
        assert th.thm35_bound(r, m, n, "paper") >= worst
        assert th.thm35_bound(r, m, n, "rigorous") >= worst
        # the spec truncates 0.066751 to 0.0667
        assert_printed(worst / (th.W(r) / np.sqrt(2 * m)), ratio, truncated=r == 3)
    # the bound as printed (√W) is violated: 0.0953 < 0.1043
    assert_printed(th.thm35_bound(1, m, n, "cse-printed"), "0.0953")
    assert th.thm35_bound(1, m, n, "cse-printed") < th.max_angular_relative_error(1, m, n)[0]
    assert_printed(th.limit_slope(1, m, n), "0.022608")


@pytest.mark.parametrize("r", [1.0, 1.25, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("n", [1, 2, 8, 64])
def test_thm35_bound_holds(r, n):
    """HRF Sec. 2.4, Eq. 19, Lemma 3.2; docs/methods.md#hrf-angular-hybrid: Eq. 27 holds, the exact
    max being 36–85 % of the bound."""
    frac = th.max_angular_relative_error(r, 16, n)[0] / th.thm35_bound(r, 16, n)
    assert 0.35 < frac < 0.86


@pytest.mark.parametrize("r", [0.5, 1.0, 2.0])
def test_thm35_limits(r):
    """ε_{θ,r}/√θ and ε_{π-θ,r}/√θ tend to W(r)/√(2πmn) (HRF Thm 3.5)."""
    m, n, eps = 16, 8, 1e-9
    slope = th.limit_slope(r, m, n)
    assert th.angular_relative_error(eps, r, m, n) / np.sqrt(eps) == pytest.approx(slope, rel=1e-6)
    assert th.angular_relative_error(PI - eps, r, m, n) / np.sqrt(eps) == pytest.approx(
        slope, rel=1e-6
    )


def test_eq47_corrected():
    """HRF; docs/methods.md#hrf-erratum-6: (r, θ, m, n) = (0.9, 1.3, 2, 3): 0.8345; the printed
    Eq. 47: 0.674."""
    r, theta, m, n = 0.9, 1.3, 2, 3
    x, y = equal_norm_pair(r, theta, 3)
    for variant in ("independent", "shared-base"):  # equal norms: I = II
        est = registry.get("angular-hybrid@iid", m=m, n=n, variant=variant)
        assert_printed(float(theory.mse(est, x, y)), "0.8345")
    mom = th.angular_lambda_moments(theta / PI, n)
    printed = th.bipolar_mse(m, x, y, th.LambdaMoments(mom.mean, mom.second, mom.cross, mom.cross),
                             shared=False)  # fmt: skip
    assert_printed(float(printed), "0.674")


def test_thm31_general_norms():
    """HRF Thm 3.1; docs/methods.md#hrf-sharing-variants: (‖x‖, ‖y‖, θ) = (0.6, 0.3, 2.5): I
    0.011098, II 0.009627 (m = 3, n = 2, the only small (m, n) matching the printed values)."""
    x, y = np.array([0.6, 0.0]), 0.3 * np.array([np.cos(2.5), np.sin(2.5)])
    for variant, printed in (("independent", "0.011098"), ("shared-base", "0.009627")):
        est = registry.get("angular-hybrid@iid", m=3, n=2, variant=variant)
        assert_printed(float(theory.mse(est, x, y)), printed)


def test_sphere_formula_equals_general_formula():
    """Eq. 48–50 (sphere) = Thm D.1 (general norms) at equal norms, over a grid, both variants."""
    r, theta = np.meshgrid([0.3, 1.0, 2.0], np.linspace(0, PI, 9))
    x, y = equal_norm_pair(r, theta, 5)
    sphere = th.angular_relative_error(theta, r, 8, 4) ** 2 * np.exp(2 * r**2 * np.cos(theta))
    for variant in ("independent", "shared-base"):
        est = registry.get("angular-hybrid@iid", m=8, n=4, variant=variant)
        np.testing.assert_allclose(theory.mse(est, x, y), sphere, rtol=1e-12, atol=1e-60)


def test_variant_ii_never_worse():
    """HRF claim 5: sharing ω lowers the MSE iff cos(‖x‖² - ‖y‖²) ≠ 1 and 0 < θ < π, n ≥ 2."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(2, 50, 4)) * 0.7
    ind, shared = (registry.get("angular-hybrid@iid", m=4, n=3, variant=v)
                   for v in ("independent", "shared-base"))  # fmt: skip
    assert np.all(theory.mse(shared, x, y) < theory.mse(ind, x, y))
    # n = 1: λ̂ ∈ {0, 1}, so λ̂(1 - λ̂) = 0 and the variants agree
    ind1, shared1 = (registry.get("angular-hybrid@iid", m=4, n=1, variant=v)
                     for v in ("independent", "shared-base"))  # fmt: skip
    np.testing.assert_allclose(theory.mse(shared1, x, y), theory.mse(ind1, x, y), rtol=1e-12)


def test_gaussian_hybrid_endpoints():
    """HRF claim 7: the normalised Gaussian hybrid has zero MSE at θ = 0 but not at θ = π."""
    est = registry.get("gaussian-hybrid@iid", m=16, n=8, sigma=1.0, radius=1.0)
    x, y = equal_norm_pair(1.0, np.array([0.0, PI]), 3)
    out = theory.mse(est, x, y)
    assert out[0] == 0.0 and out[1] > 1e-3


def test_gaussian_hybrid_moments_limits():
    """Thm F.1: λ = 0 at Δ = 0, λ = 1 at θ = π on S(r) (ρ = 1 - e^{-2σ²r²}), E[λ̂²] - E[λ̂]² = Var."""
    sigma, r, n = 0.8, 1.3, 5
    rho = -np.expm1(-2 * sigma**2 * r**2)
    mom = th.gaussian_lambda_moments(np.array([0.0, 4 * r**2]), n, sigma, rho)
    np.testing.assert_allclose(mom.mean, [0.0, 1.0], atol=1e-15)
    var = np.expm1(-(sigma**2) * 4 * r**2) ** 2 / (2 * n) / rho**2
    assert mom.var[1] == pytest.approx(var, rel=1e-12)
    assert mom.second_complement[1] == pytest.approx(var, rel=1e-12)  # E[(1-λ̂)²] at λ = 1


def test_complex_exp_special_cases():
    """HRF Sec. 2.3, Lemma 2.4; docs/methods.md#complex-exp: A = iI gives MSE(trig), A = I MSE(SM⁺),
    real A (SM²/m)(e^l - 1)."""
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(2, 20, 3)) * 0.6
    m = 7
    for options, ref in (({}, trig_mse(m, x, y)), ({"A": 1.0}, positive_mse(m, x, y))):
        est = registry.get("complex-exp@iid", m=m, **options)
        np.testing.assert_allclose(theory.mse(est, x, y), ref, rtol=1e-12)
    a = np.array([0.5, 2.0, 1.3])
    est = registry.get("complex-exp@iid", m=m, diag=a)
    loss = np.sum((a * x + y / a) ** 2, axis=-1)
    np.testing.assert_allclose(
        theory.mse(est, x, y), np.exp(2 * np.sum(x * y, -1)) * np.expm1(loss) / m, rtol=1e-12
    )


def test_gaussian_kernel_conversion():
    """MSE of the Gaussian-kernel hybrid = e^{-‖x‖²-‖y‖²}·MSE (HRF Sec. 2;
    docs/methods.md#notation)."""
    x, y = np.array([0.5, 0.2]), np.array([-0.3, 0.7])
    soft = registry.get("angular-hybrid@iid", m=5, n=3)
    gauss = registry.get("angular-hybrid@iid", kernel="gaussian", m=5, n=3)
    ratio = theory.mse(gauss, x, y) / theory.mse(soft, x, y)
    assert ratio == pytest.approx(np.exp(-(x @ x) - (y @ y)), rel=1e-12)


@pytest.mark.parametrize(("r", "printed", "se"), [(1.0, 0.0070, 0.0006), (2.0, 1.38, 0.13)])
def test_shared_all_bias_matches_spec_simulation(r, printed, se):
    """docs/methods.md#cse-bias (MC, 20 000 trials, d = 64, m = n = 128, θ = 2.5): relative bias of
    variant S +0.70 % ± 0.06 % (r = 1) and +138 % ± 13 % (r = 2); the quadrature agrees."""
    x, y = equal_norm_pair(r, 2.5, 64)
    bias = float(th.shared_all_bias(x, y, 128) / np.exp(x @ y))
    assert abs(bias - printed) < 3 * se


def test_theory_registration():
    assert theory.has_theory("angular-hybrid@iid")
    assert theory.has_theory("gaussian-hybrid@iid")
    assert theory.has_theory("complex-exp@iid")
    with pytest.raises(NotImplementedError):
        theory.mse(registry.get("cse", m=8), np.ones(2), np.ones(2))
