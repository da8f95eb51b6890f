"""Closed-form MSE of coupled random features iid, ORF, SimRF for trig, positive and hyperbolic maps
(SimRF Thm 3.2, Eqs. 10–24, Thm 4.5; docs/methods.md#coupled-mse, #stacking, #rff-coupled).

MSE = (1/m)[Var g - (P/m) D] with P the coupled ordered pairs and D the conformity deficit
Δ_c(s) = e^s - ρ_c(s); ρ_c is a power series for |s| ≤ 4 and Gauss–Legendre quadrature beyond."""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy.special import gammaln, hyp1f1, logsumexp, roots_legendre

from rfbench.compute.features.base import Estimator
from rfbench.compute.features.theory.registry import register_theory
from rfbench.compute.kernels import kernel_alpha, sq_norms

COUPLINGS = ("iid", "orf", "simrf")
COMPONENTS = ("positive", "hyperbolic", "trig")
_TERMS = 64  # power-series terms of Δ_c; error < 4^64/64! at |s| ≤ 4
_SERIES_MAX = 4.0
_NODES = 512  # Gauss–Legendre nodes in φ ∈ [0, π/2] (the integrand is symmetric about π/2)
_LOG_1F1_SWITCH = 600.0  # 1F1(d; d/2; x) overflows past x ≈ 700: Kummer, e^x 1F1(-d/2; d/2; -x)


def coupling_cosine(coupling: str, d: int) -> float | None:
    """cos θ of coupled directions: None (iid), 0 (ORF), -1/(d-1) (SimRF, docs/methods.md#simrf)."""
    if coupling not in COUPLINGS:
        raise ValueError(f"unknown coupling {coupling!r}; allowed: {', '.join(COUPLINGS)}")
    if coupling == "iid":
        return None
    if coupling == "simrf" and d < 2:
        raise ValueError(f"simplex couplings need d >= 2 input features, got {d} feature(s)")
    return 0.0 if coupling == "orf" else -1.0 / (d - 1)


def coupled_pairs(m: int, d: int) -> int:
    """Coupled ordered pairs P = n d(d-1) + r(r-1) for m = n d + r (SimRF Sec. 3;
    docs/methods.md#stacking)."""
    n, r = divmod(int(m), int(d))
    return n * d * (d - 1) + r * (r - 1)


@cache
def half_rule() -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes φ on [0, π/2] and their log-weights."""
    t, w = roots_legendre(_NODES)
    return np.pi / 4 * (t + 1), np.log(np.pi / 4 * w)


@cache
def _phi_rule(d: int) -> tuple[np.ndarray, np.ndarray]:
    """sin φ at the nodes and log-weights ∝ w sin^{d-1}φ summing to 1 (the law of φ in Eq. 21)."""
    phi, log_w = half_rule()
    log_w = log_w + (d - 1) * np.log(np.sin(phi))
    return np.sin(phi), log_w - logsumexp(log_w)


@cache
def _deficit_coefficients(d: int, c: float, symmetric: bool) -> np.ndarray:
    """e_k of Δ_c(s) = Σ_k e_k s^k (Δ̄_c if symmetric): e_k = (1 - r_k μ_k)/k! (Eq. 24), where
    r_k = (d)_k/((d/2)_k 2^k) = Π_{l<k} (d+l)/(d+2l) and μ_k = E(1 + c sin φ)^k (Eq. 22).

    For c = 0 this is the bracket of Cor. 4.4 (Eq. 25). μ_0 = 1, and μ_1 = 1 when symmetric, are
    set exactly so that the v → 0 limits do not pick up rounding.
    """
    k = np.arange(_TERMS)
    log_r = np.concatenate([[0.0], np.cumsum(np.log((d + k[:-1]) / (d + 2.0 * k[:-1])))])
    mu = np.ones(_TERMS)
    if c != 0.0:
        sin, log_w = _phi_rule(d)
        signs = (c, -c) if symmetric else (c,)
        mu = np.mean([np.exp(log_w) @ (1 + sc * sin[:, None]) ** k for sc in signs], axis=0)
        mu[: 2 if symmetric else 1] = 1.0
    return -np.expm1(log_r + np.log(mu)) * np.exp(-gammaln(k + 1))


def _log_1f1(d: int, x: np.ndarray) -> np.ndarray:
    """log 1F1(d; d/2; x) for x ≥ 0 (Kummer's transformation beyond the overflow range)."""
    big = x > _LOG_1F1_SWITCH
    small_part = np.log(hyp1f1(d, d / 2, np.where(big, 0.0, x)))
    big_part = x + np.log(hyp1f1(-d / 2, d / 2, -np.where(big, x, 0.0)))
    return np.where(big, big_part, small_part)


def log_conformity(d: int, c: float, v2: np.ndarray) -> np.ndarray:
    """log ρ_c(v²), v² ≥ 0: one pair at cos θ = c (Eq. 21; ORF Eq. 23: 1F1(d; d/2; v²/2))."""
    v2 = np.asarray(v2, dtype=float)
    if c == 0.0:
        return _log_1f1(d, v2 / 2)
    sin, log_w = _phi_rule(d)
    return logsumexp(log_w + _log_1f1(d, v2[..., None] * (1 + c * sin) / 2), axis=-1)


def rff_conformity(d: int, c: float, z2: np.ndarray) -> np.ndarray:
    """ρ_c(-z²) = E cos((ω_i + ω_j)ᵀz): PRF conformity at v → iz (SimRF Sec. 4.1;
    docs/methods.md#rff-coupled; ORF: 1F1(d; d/2; -z²/2))."""
    z2 = np.asarray(z2, dtype=float)
    if c == 0.0:
        return hyp1f1(d, d / 2, -z2 / 2)
    sin, log_w = _phi_rule(d)
    return hyp1f1(d, d / 2, -z2[..., None] * (1 + c * sin) / 2) @ np.exp(log_w)


def deficit(
    d: int, c: float, s: np.ndarray, log_scale: np.ndarray | float = 0.0, symmetric: bool = False
) -> np.ndarray:
    """Δ_c(s)·e^{-log_scale} = (e^s - ρ_c(s))·e^{-log_scale} (Δ̄_c if symmetric).

    s = v² (PRFs) or s = -z² (RFFs); power series for |s| ≤ 4, quadrature beyond.
    """
    s, log_scale = np.broadcast_arrays(np.asarray(s, float), np.asarray(log_scale, float))
    shape, s, log_scale = s.shape, s.ravel(), log_scale.ravel()
    coefficients = _deficit_coefficients(d, c, symmetric and c != 0.0)
    out = np.polynomial.polynomial.polyval(np.clip(s, -_SERIES_MAX, _SERIES_MAX), coefficients)
    out = out * np.exp(-log_scale)
    signs = (c, -c) if symmetric and c != 0.0 else (c,)
    pos, neg = s > _SERIES_MAX, s < -_SERIES_MAX
    if pos.any():
        sp, lp = s[pos], log_scale[pos]
        out[pos] = np.mean([-np.expm1(log_conformity(d, sc, sp) - sp) for sc in signs], axis=0)
        out[pos] *= np.exp(sp - lp)
    if neg.any():
        sn, ln = s[neg], log_scale[neg]
        rho = np.mean([rff_conformity(d, sc, -sn) for sc in signs], axis=0)
        out[neg] = (np.exp(sn) - rho) * np.exp(-ln)
    return out.reshape(shape)


def _bracket(component: str, coupling: str, d: int, m: int, s: np.ndarray) -> np.ndarray:
    """m·MSE divided by its exponential scale: e^{-2s}[Var - (P/m) D] (trig: unscaled, s = t)."""
    c = coupling_cosine(coupling, d)
    if component == "trig":
        var, scale, arg = np.expm1(-s) ** 2 / 2, 0.0, -s
    elif component == "positive":
        var, scale, arg = -np.expm1(-s), 2 * s, s
    elif component == "hyperbolic":
        var, scale, arg = np.expm1(-s) ** 2 / 2, 2 * s, s
    else:
        raise ValueError(f"no coupled theory for component {component!r}; allowed: {COMPONENTS}")
    if c is None:
        return var
    lost = deficit(d, c, arg, scale, symmetric=component != "positive")
    return var - coupled_pairs(m, d) / m * lost


def mse(
    component: str,
    coupling: str,
    x: np.ndarray,
    y: np.ndarray,
    m: int,
    *,
    kernel: str | float = "gaussian",
) -> np.ndarray:
    """MSE of ``component@coupling``, m projections, at x, y of shape (..., d) (module doc).

    ``kernel`` defaults to the Gaussian kernel of the paper's experiments; the registered theory
    functions (and hence ``theory.mse``) use the softmax form and let the dispatcher convert.
    """
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    d = x.shape[-1]
    norms = sq_norms(x) + sq_norms(y)
    if component == "trig":
        b = _bracket(component, coupling, d, m, sq_norms(x - y))
        log_pre = norms
    else:
        s = sq_norms(x + y)
        b = _bracket(component, coupling, d, m, s)
        log_pre = 2 * s - norms
    log_pre = log_pre + 2 * kernel_alpha(kernel) * norms - np.log(m)
    with np.errstate(over="ignore"):
        return np.exp(log_pre) * b


def rf_conformity(coupling: str, d: int, v) -> np.ndarray:
    """ρ(v) of one block (Eqs. 19, 23, 24); overflows past v ≈ 26 — use ``log_conformity``."""
    v2 = np.asarray(v, dtype=float) ** 2
    c = coupling_cosine(coupling, d)
    return np.exp(v2 if c is None else log_conformity(d, c, v2))


def mse_ratio(coupling: str, d: int, m: int, v, component: str = "positive") -> np.ndarray:
    """MSE_coupling / MSE_iid at ‖x+y‖ = v (trig: ‖x-y‖ = v); depends on the data only via v (SimRF
    Sec. 5.1, Fig. 6; docs/experiments.md#simrf-fig6).

    v = 0 gives the v → 0 limit (evaluated at v² = 1e-100).
    """
    s = np.maximum(np.asarray(v, dtype=float) ** 2, 1e-100)
    return _bracket(component, coupling, d, m, s) / _bracket(component, "iid", d, m, s)


def small_v_ratio(d: int, m: int | None = None) -> float:
    """lim_{v→0} MSE_SimRF/MSE_IID = 1 - (m-1)/(d-1) · π d Γ(d+1)² / (2^{2d+1} Γ(d/2+1)⁴) (SimRF
    Sec. 5.1; docs/methods.md#simrf-small-v)."""
    m = d if m is None else m
    log_t = (
        np.log(np.pi * d) + 2 * gammaln(d + 1) - (2 * d + 1) * np.log(2) - 4 * gammaln(d / 2 + 1)
    )
    return float(1 - (m - 1) / (d - 1) * np.exp(log_t))


def prf_orthogonality_gap(d: int, m: int, x, y, *, kernel: str | float = "gaussian") -> np.ndarray:
    """MSE_IID - MSE_ORF of PRFs (Cor. 4.4, Eq. 25; > 0): e^{-2x²-2y²}(m-1)/m · Δ_0(v²), m ≤ d."""
    gap = mse("positive", "iid", x, y, m, kernel=kernel)
    return gap - mse("positive", "orf", x, y, m, kernel=kernel)


def rff_orthogonality_gap(d: int, m: int, z) -> np.ndarray:
    """MSE_IID - MSE_ORF of Gaussian RFFs (Thm 4.5, Eq. 26): (m-1)/m (e^{-z²} - 1F1(d; d/2; -z²/2))
    for m ≤ d (stacked blocks: P/m² instead of (m-1)/m)."""
    z2 = np.asarray(z, dtype=float) ** 2
    return coupled_pairs(m, d) / m**2 * deficit(d, 0.0, -z2)


def gram_frobenius_expectation(
    coupling: str, X: np.ndarray, m: int, *, kernel: str | float = "gaussian", component="positive"
) -> float:
    """E Σ_ij (K_ij - K̂_ij)² = Σ_ij MSE(x_i, x_j), diagonal included (Fig. 7, SimRF Sec. 5.2,
    Fig. 7; docs/experiments.md#simrf-fig7)."""
    X = np.asarray(X, dtype=float)
    return float(np.sum(mse(component, coupling, X[:, None, :], X[None, :, :], m, kernel=kernel)))


def _registered(component: str, coupling: str):
    def formula(est: Estimator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return mse(component, coupling, x, y, est.m, kernel="softmax")

    formula.__doc__ = f"Softmax-kernel MSE of {component}@{coupling} (docs/methods.md#coupled-mse)."
    return formula


for _component in COMPONENTS:
    for _coupling in ("orf", "simrf"):
        register_theory(f"{_component}@{_coupling}")(_registered(_component, _coupling))
