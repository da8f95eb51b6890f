"""Closed-form MSEs of the hybrid and complex-exponential estimators with iid projections (HRF
Thm 3.1, D.1, F.1, Lemma 3.2–3.4, Thm 3.5; CSE Thm 3.1; docs/methods.md#hrf-sharing-variants,
#hrf-max-error, #cse-bias, #complex-exp), and the relative errors on the sphere S(r)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import dawsn, erf

from rfbench.compute.features.base import Estimator
from rfbench.compute.features.theory.basic import hyperbolic_mse, trig_mse
from rfbench.compute.features.theory.registry import register_theory
from rfbench.compute.kernels import sq_norms


@dataclass(frozen=True)
class LambdaMoments:
    """E[λ̂], E[λ̂²], E[(1-λ̂)²], E[λ̂(1-λ̂)] of a λ-estimator."""

    mean: np.ndarray
    second: np.ndarray
    second_complement: np.ndarray
    cross: np.ndarray

    @property
    def var(self) -> np.ndarray:
        return self.second - self.mean**2


def angle(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """θ_{x,y} = 2·atan2(‖x̂ - ŷ‖, ‖x̂ + ŷ‖) (accurate near 0 and π); (..., d) -> (...).

    A zero vector has sgn(τᵀ0) = +1 (the convention of the hybrids), so θ/π := ½ against a nonzero
    vector and 0 against another zero vector.
    """
    nx, ny = np.sqrt(sq_norms(x))[..., None], np.sqrt(sq_norms(y))[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        u, v = x / nx, y / ny
        theta = 2 * np.arctan2(np.sqrt(sq_norms(u - v)), np.sqrt(sq_norms(u + v)))
    zx, zy = nx[..., 0] == 0, ny[..., 0] == 0
    return np.where(zx | zy, np.where(zx & zy, 0.0, np.pi / 2), theta)


def angular_lambda_moments(p: np.ndarray, n: int) -> LambdaMoments:
    """HRF Lemma 3.2 (Eq. 24) and its corollaries (docs/methods.md#hrf-angular-hybrid), p = θ/π."""
    p = np.asarray(p, dtype=float)
    return LambdaMoments(
        p, p * (p - p / n + 1 / n), (1 - p) * (1 - p + p / n), p * (1 - p) * (1 - 1 / n)
    )


def gaussian_lambda_moments(delta2: np.ndarray, n: int, sigma: float, rho: float) -> LambdaMoments:
    """HRF Thm F.1 (Eq. 72–73): λ̂ = (1 - K̂)/ρ, K̂ = (1/n)Σcos(στᵀΔ), Var K̂ = (1-e^{-σ²‖Δ‖²})²/2n."""
    k = np.exp(-0.5 * sigma**2 * delta2)
    var = np.expm1(-(sigma**2) * delta2) ** 2 / (2 * n)
    mean = -np.expm1(-0.5 * sigma**2 * delta2) / rho
    second = mean**2 + var / rho**2
    return LambdaMoments(mean, second, ((k - (1 - rho)) ** 2 + var) / rho**2, mean - second)


def bipolar_mse(
    m: int, x: np.ndarray, y: np.ndarray, mom: LambdaMoments, shared: bool
) -> np.ndarray:
    """HRF Thm 3.1 (Eq. 22, variant I; Eq. 23, variant II with shared ω), any independent λ̂."""
    out = mom.second * hyperbolic_mse(m, x, y) + mom.second_complement * trig_mse(m, x, y)
    if shared:
        xy, gap = np.einsum("...i,...i->...", x, y), sq_norms(x) - sq_norms(y)
        out = out - (4 / m) * np.exp(2 * xy) * np.sin(gap / 2) ** 2 * mom.cross
    return out


@register_theory("angular-hybrid@iid")
def _angular(est: Estimator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if est.variant == "shared-all":
        raise NotImplementedError(
            "CSE variant shared-all is biased: no closed form (docs/methods.md#cse-bias)"
        )
    mom = angular_lambda_moments(angle(x, y) / np.pi, est.n)
    return bipolar_mse(est.m, x, y, mom, shared=est.variant == "shared-base")


@register_theory("gaussian-hybrid@iid")
def _gaussian(est: Estimator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    mom = gaussian_lambda_moments(sq_norms(x - y), est.n, est.sigma, est.rho)
    return bipolar_mse(est.m, x, y, mom, shared=est.variant == "shared-base")


def complex_exp_mse(m: int, z: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """MSE of Re ŜM^cexp (HRF Sec. 2.3, Lemma 2.4; docs/methods.md#complex-exp):
    (SM²/2m)[e^{|z|²} + Re e^{zᵀz} - 2], z = Ax + (Aᵀ)⁻¹y.

    Written as e^{2xᵀy + |z|²}/(2m) · [1 - e^{-|z|²} + e^{-|z|²}(Re e^{zᵀz} - 1)], with
    Re e^{q} - 1 = expm1(Re q)·cos(Im q) - 2 sin²(Im q/2) and Re q ≤ |z|², so nothing overflows
    before the MSE itself does.
    """
    a = np.sum(np.abs(z) ** 2, axis=-1)
    q = np.sum(z * z, axis=-1)
    re, im = np.real(q), np.imag(q)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled_expm1 = np.where(re > 1, np.exp(re - a) - np.exp(-a), np.exp(-a) * np.expm1(re))
    bracket = -np.expm1(-a) + scaled_expm1 * np.cos(im) - 2 * np.exp(-a) * np.sin(im / 2) ** 2
    return np.exp(2 * xy + a - np.log(2 * m)) * bracket


@register_theory("complex-exp@iid")
def _complex_exp(est: Estimator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    comp = est.component
    z = comp.apply(x, "query") + comp.apply(y, "key")
    return complex_exp_mse(est.m, z, np.einsum("...i,...i->...", x, y))


# --- the sphere S(r): relative errors ε_{θ,r} = √MSE / SM (Def. 3.3) -------------------------


def W(r: np.ndarray) -> np.ndarray:
    """W(r) = e^{2r²}(1 - e^{-4r²}) (HRF Eq. 26; CSE eq. 21, W outside the root)."""
    r2 = np.asarray(r, dtype=float) ** 2
    return np.exp(2 * r2) * -np.expm1(-4 * r2)


def trig_relative_error(theta: np.ndarray, r: np.ndarray, m: int) -> np.ndarray:
    """ε_{θ,r}(trig) = (2m)^{-1/2} e^{2r² sin²(θ/2)} (1 - e^{-4r² sin²(θ/2)}) (HRF Eq. 25)."""
    s = 2 * np.asarray(r, dtype=float) ** 2 * np.sin(np.asarray(theta, dtype=float) / 2) ** 2
    return np.exp(s) * -np.expm1(-2 * s) / np.sqrt(2 * m)


def hyperbolic_relative_error(theta: np.ndarray, r: np.ndarray, m: int) -> np.ndarray:
    """ε_{θ,r}(SM⁺⁺) = ε_{π-θ,r}(trig) (HRF Lemma 3.4)."""
    return trig_relative_error(np.pi - np.asarray(theta, dtype=float), r, m)


def angular_relative_error(theta: np.ndarray, r: np.ndarray, m: int, n: int) -> np.ndarray:
    """ε_{θ,r}(anghyb) = e^{r²}(2m)^{-1/2} √(a_r(θ) + a_r(π-θ)) (HRF Eq. 48–50; CSE eq. 47–49).

    Equals √MSE/SM of Thm D.1 on the sphere, i.e. Eq. 47 with the corrected second coefficient.
    """
    theta = np.asarray(theta, dtype=float)
    p = theta / np.pi
    mom = angular_lambda_moments(p, n)
    # a_r(θ)·e^{2r²}/(2m) = E[λ̂²]·ε⁺⁺² and a_r(π-θ)·e^{2r²}/(2m) = E[(1-λ̂)²]·ε_trig²
    sq = mom.second * hyperbolic_relative_error(theta, r, m) ** 2
    sq = sq + mom.second_complement * trig_relative_error(theta, r, m) ** 2
    return np.sqrt(sq)


def max_angular_relative_error(r: float, m: int, n: int, grid: int = 2001) -> tuple[float, float]:
    """(max_θ ε_{θ,r}(anghyb), the maximising θ ≤ π/2): the max-relative-error ε_{S(r)}."""
    thetas = np.linspace(0, np.pi / 2, grid)  # ε is symmetric under θ -> π - θ
    i = int(np.argmax(angular_relative_error(thetas, r, m, n)))
    lo, hi = thetas[max(i - 1, 0)], thetas[min(i + 1, grid - 1)]
    res = minimize_scalar(
        lambda t: -angular_relative_error(t, r, m, n),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return float(-res.fun), float(res.x)


def thm35_bound(r: float, m: int, n: int, form: str = "paper") -> float:
    """Upper bounds on ε_{S(r)}(anghyb_{m,n}) for r ≥ 1 (HRF Thm 3.5, Eq. 27; CSE eq. 22).

    "paper": (1/r)(2m)^{-1/2} W(r) √(1/π - 1/(nπ) + 1/(n√π)) (HRF Eq. 27; CSE eq. 22 corrected);
    "rigorous": (2m)^{-1/2} W(r) √((1-1/n)/(πr²) + 1/(n√π r)) (the proof's slip fixed,
    docs/methods.md#hrf-erratum-8, docs/methods.md#hrf-max-error); "cse-printed": CSE eq. 22 with √W
    — violated (docs/methods.md#hrf-max-error).
    """
    base = W(r) / np.sqrt(2 * m)
    paper = np.sqrt(1 / np.pi - 1 / (n * np.pi) + 1 / (n * np.sqrt(np.pi))) / r
    if form == "paper":
        return float(base * paper)
    if form == "rigorous":
        return float(base * np.sqrt((1 - 1 / n) / (np.pi * r**2) + 1 / (n * np.sqrt(np.pi) * r)))
    if form == "cse-printed":
        return float(np.sqrt(W(r) / (2 * m)) * paper)
    raise ValueError(f"form must be 'paper', 'rigorous' or 'cse-printed', got {form!r}")


def limit_slope(r: float, m: int, n: int) -> float:
    """lim_{θ→0} ε_{θ,r}/√θ = lim_{θ→π} ε_{θ,r}/√(π-θ) = W(r)/√(2πmn) (HRF Thm 3.5; CSE eq. 23)."""
    return float(W(r) / np.sqrt(2 * np.pi * m * n))


def shared_all_bias(x: np.ndarray, y: np.ndarray, m: int, nodes: int = 256) -> np.ndarray:
    """E[K̂] - SM of the CSE variant S (τ_i = ω_i, n ≤ m, iid ω) [derived;
    docs/methods.md#cse-bias].

    Only the m pairs τ_j = ω_j correlate λ̂ with the bases, so the bias is
    (1/m)·E[1(sgn ωᵀx ≠ sgn ωᵀy)·(k⁺⁺(ω) - k^trig(ω))], independent of n. In polar coordinates of
    span(x, y) the signs differ on two opposite arcs of length θ; the radial integrals are
    ∫ρe^{-ρ²/2}cosh(sρ)dρ = 1 + s√(π/2)e^{s²/2}erf(s/√2), ∫ρe^{-ρ²/2}cos(tρ)dρ = 1 - √2·t·D(t/√2)
    (D = Dawson's function); the arc is integrated by Gauss–Legendre.
    """
    nx, ny = np.sqrt(sq_norms(x))[..., None], np.sqrt(sq_norms(y))[..., None]
    theta = angle(x, y)[..., None]
    t, w = np.polynomial.legendre.leggauss(nodes)
    phi = np.pi / 2 + theta * (t + 1) / 2  # the arc (π/2, π/2 + θ); its mirror doubles it
    px, py = nx * np.cos(phi), ny * np.cos(phi - theta)
    s, d = px + py, px - py
    r_cosh = 1 + s * np.sqrt(np.pi / 2) * np.exp(s**2 / 2) * erf(s / np.sqrt(2))
    r_cos = 1 - np.sqrt(2) * d * dawsn(d / np.sqrt(2))
    half = 0.5 * (nx[..., 0] ** 2 + ny[..., 0] ** 2)
    arc = theta[..., 0] / 2 / np.pi  # (1/2π)·2 arcs·(θ/2)·Σ w_k f(φ_k)
    pos, trig = np.exp(-half) * (w * r_cosh).sum(-1), np.exp(half) * (w * r_cos).sum(-1)
    return arc * (pos - trig) / m
