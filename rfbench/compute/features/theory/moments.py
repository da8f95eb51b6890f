"""Closed-form 4th moments E(K̂ - K)⁴ of i.i.d. random-feature estimators, for standard errors of the
sample MSE that see the tails (HRF Eq. 3, 12, Thm 3.1; DERF Thm 4.1; docs/methods.md#heavy-tails).

Cumulants of the mean of m i.i.d. terms are κ_j/m^{j-1}, so E(K̂ - K)⁴ = κ₄/m³ + 3(κ₂/m)²;
``central_fourth`` returns None where no closed form exists (callers use the sample SE)."""

from __future__ import annotations

import numpy as np
from numpy.polynomial import Polynomial
from scipy.special import comb

from rfbench.compute.features.base import Estimator
from rfbench.compute.features.derf import MECHANISMS
from rfbench.compute.features.theory.coupled import COMPONENTS
from rfbench.compute.kernels import sq_norms

ORDERS = (1, 2, 3, 4)


def term_moments(kind: str, v: np.ndarray) -> list[np.ndarray]:
    """[E g, E g², E g³, E g⁴] for g = e^{u√v} ("exp") or cosh(u√v) ("cosh"; v < 0: cos(u√-v))."""
    v = np.asarray(v, dtype=float)
    with np.errstate(over="ignore"):
        if kind == "exp":
            return [np.exp(k * k * v / 2) for k in ORDERS]
        if kind == "cosh":
            return [
                sum(comb(k, j) * np.exp((k - 2 * j) ** 2 * v / 2) for j in range(k + 1)) / 2**k
                for k in ORDERS
            ]
    raise ValueError(f"kind must be 'exp' or 'cosh', got {kind!r}")


def cumulants(raw: list[np.ndarray]) -> list[np.ndarray]:
    """κ₁..κ₄ from the raw moments m₁..m₄."""
    m1, m2, m3, m4 = raw
    return [
        m1,
        m2 - m1**2,
        m3 - 3 * m2 * m1 + 2 * m1**3,
        m4 - 4 * m3 * m1 - 3 * m2**2 + 12 * m2 * m1**2 - 6 * m1**4,
    ]


def mean_raw_moments(raw: list[np.ndarray], n: int) -> list[np.ndarray]:
    """Raw moments m₁..m₄ of the mean of n i.i.d. terms with raw moments ``raw``."""
    k1, k2, k3, k4 = (k / n**j for j, k in enumerate(cumulants(raw)))
    return [
        k1,
        k2 + k1**2,
        k3 + 3 * k2 * k1 + k1**3,
        k4 + 4 * k3 * k1 + 3 * k2**2 + 6 * k2 * k1**2 + k1**4,
    ]


def mean_central(raw: list[np.ndarray], m: int) -> tuple[np.ndarray, np.ndarray]:
    """(E(K̂ - K)², E(K̂ - K)⁴) of the mean K̂ of m i.i.d. terms (cumulants κ_j/m^{j-1})."""
    _, k2, _, k4 = cumulants(raw)
    k2 = np.maximum(k2, 0.0)
    return k2 / m, np.maximum(k4 / m**3 + 3 * (k2 / m) ** 2, 0.0)


def component_central(component: str, m: int, x: np.ndarray, y: np.ndarray):
    """(E(K̂ - K)², E(K̂ - K)⁴) of ``component@iid`` with m projections, softmax kernel."""
    norms = sq_norms(x) + sq_norms(y)
    if component == "trig":
        scale, raw = np.exp(norms / 2), term_moments("cosh", -sq_norms(x - y))
    elif component in ("positive", "hyperbolic"):
        kind = "exp" if component == "positive" else "cosh"
        scale, raw = np.exp(-norms / 2), term_moments(kind, sq_norms(x + y))
    else:
        raise ValueError(f"no closed-form moments for {component!r}; allowed: {COMPONENTS}")
    with np.errstate(over="ignore", invalid="ignore"):
        raw = [r * scale**k for k, r in zip(ORDERS, raw, strict=True)]
        return mean_central(raw, m)


def derf_central(derf, x: np.ndarray, y: np.ndarray, m: int):
    """(E(K̂ - K)², E(K̂ - K)⁴) of a GERF/DERF with m i.i.d. projections (module docstring)."""
    a = np.asarray(derf.a, dtype=float)
    b = x @ derf.B1.T + y @ derf.B2.T
    c = np.einsum("...i,ij,...j->...", x, derf.C1, x) + np.einsum(
        "...i,ij,...j->...", y, derf.C2, y
    )
    raw = []
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for k in ORDERS:
            denom = 1.0 - 4.0 * k * a
            if np.any(denom <= 0):
                raw.append(np.full(c.shape, np.inf))
                continue
            log = 2 * k * derf.log_D + k * c - 0.5 * np.sum(np.log(denom))
            raw.append(np.exp(log + 0.5 * k * k * np.sum(b**2 / denom, axis=-1)))
        return mean_central(raw, m)


def lambda_products(est: Estimator, x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """[E λ̂⁴, E λ̂²(1-λ̂)², E (1-λ̂)⁴] of a bipolar hybrid's λ̂ (module docstring)."""
    from rfbench.compute.features.theory.hybrid import angle

    head = est.name.partition("@")[0]
    if head == "angular-hybrid":
        p = angle(x, y) / np.pi
        raw, alpha, beta = [p] * 4, 0.0, 1.0
    else:
        raw = term_moments("cosh", -(est.sigma**2) * sq_norms(x - y))
        alpha, beta = 1.0 / est.rho, -1.0 / est.rho
    moments = [np.ones_like(raw[0]), *mean_raw_moments(raw, est.n)]
    lam = Polynomial([alpha, beta])
    out = []
    for j, k in ((4, 0), (2, 2), (0, 4)):
        coef = (lam**j * (1 - lam) ** k).coef
        out.append(sum(c * moments[i] for i, c in enumerate(coef)))
    return out


def central_fourth(
    est: Estimator, x: np.ndarray, y: np.ndarray, params: dict | None = None
) -> np.ndarray | None:
    """E(K̂ - K)⁴ of ``est`` at pairs x, y (..., d) in its kernel, or None (no closed form).
    GERF/DERF need their fitted ``params`` (``draw.params``)."""
    head, _, weights = est.name.partition("@")
    if weights != "iid" or est.kernel == "angular":
        return None
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if head in MECHANISMS:
        if not params or "derf" not in params:
            return None
        out = derf_central(params["derf"], x, y, est.m)[1]
    elif head in COMPONENTS:
        out = component_central(head, est.m, x, y)[1]
    elif head in ("angular-hybrid", "gaussian-hybrid") and est.variant == "independent":
        a2, a4 = component_central("hyperbolic", est.m, x, y)
        b2, b4 = component_central("trig", est.m, x, y)
        l4, l22, c4 = lambda_products(est, x, y)
        with np.errstate(over="ignore", invalid="ignore"):
            out = l4 * a4 + 6 * l22 * a2 * b2 + c4 * b4
    else:
        return None
    with np.errstate(over="ignore"):
        return out * np.exp(4 * est.alpha * (sq_norms(x) + sq_norms(y)))


def mean_stderr(mse: np.ndarray, samples: int) -> np.ndarray:
    """SE of the mean (and bias) of ``samples`` unbiased estimates: √(MSE/N)."""
    return np.sqrt(np.asarray(mse, dtype=float) / samples)


def mse_stderr(
    est: Estimator,
    x: np.ndarray,
    y: np.ndarray,
    mse: np.ndarray,
    samples: int,
    params: dict | None = None,
) -> np.ndarray | None:
    """SE of the sample MSE of ``samples`` estimates: √((E(K̂-K)⁴ - MSE²)/N), or None."""
    fourth = central_fourth(est, x, y, params)
    if fourth is None:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        return np.sqrt(np.maximum(fourth - np.asarray(mse, dtype=float) ** 2, 0.0) / samples)
