"""Exact probability that the trig estimate of the softmax kernel is negative (CSE Fig. 4;
HRF Eq. 5): the sign of Σ_i cos(s Z_i), s = ‖x − y‖, by Gil-Pelaez inversion of the
Jacobi–Anger characteristic function φ_C(t) = J_0(t) + 2 Σ_{k≥1} i^k J_k(t) e^{−k²s²/2}."""

from __future__ import annotations

import numpy as np
from scipy.integrate import simpson
from scipy.special import jv

#: Probabilities whose Hoeffding bound exp(−m μ²/2) (μ = E cos(sZ)) is below this are returned as 0.
NEGLIGIBLE = 1e-12
#: |φ_S(t)| below this ends the integral.
TAIL = 1e-14
#: Largest t searched for the end of the integral, and the step of that search.
T_MAX = 400.0
T_STEP = 0.25


def cos_char(t: np.ndarray, s: float) -> np.ndarray:
    """φ_C(t) = E exp(i t cos(sZ)), Z ~ N(0, 1), by the Jacobi–Anger series (exact up to k_max)."""
    t = np.asarray(t, dtype=float)
    k_max = int(np.max(t, initial=0.0) + 20 * np.max(t, initial=0.0) ** (1 / 3) + 40)
    if s > 0:  # |J_k| ≤ 1: terms whose weight e^{−k²s²/2} is below 1e-18 add nothing to float64
        k_max = min(k_max, int(np.sqrt(2 * np.log(1e18)) / s) + 1)
    k = np.arange(1, k_max + 1)
    weights = 2 * (1j**k) * np.exp(-0.5 * (k * s) ** 2)
    return jv(0, t) + (jv(k[None, :], t[:, None]) * weights[None, :]).sum(axis=1)


def _sign_negative_probability(s: float, m: int) -> float:
    """P(Σ_{i ≤ m} cos(s Z_i) < 0) by Gil-Pelaez inversion of φ_C^m."""
    mean = float(np.exp(-0.5 * s * s))
    if s <= 0.0 or np.exp(-m * mean * mean / 2) < NEGLIGIBLE:
        return 0.0
    end, start = 0.0, 0.0
    while start < T_MAX:  # windows of growing length until |φ_S| stays below TAIL
        width = max(16.0, start)
        coarse = np.arange(start, start + width, T_STEP) + T_STEP
        big = np.abs(cos_char(coarse, s)) ** m > TAIL
        if not big.any():
            break
        end, start = float(coarse[np.nonzero(big)[0][-1]]), start + width
    end += 1.0
    # S ∈ [−m, m]: φ_S oscillates with frequency ≤ m, so ≥ 16 points per period.
    t = np.linspace(0.0, end, int(end * m * 16 / (2 * np.pi)) + 2)
    phi = cos_char(t[1:], s) ** m
    integrand = np.concatenate([[m * mean], np.imag(phi) / t[1:]])  # limit t → 0: E S
    value = 0.5 - simpson(integrand, x=t) / np.pi
    return float(min(max(value, 0.0), 1.0))


def trig_negative_probability(theta: float | np.ndarray, m: int, r: float = 1.0) -> np.ndarray:
    """P(K̂_trig < 0) at angle θ between x, y with ‖x‖ = ‖y‖ = r, m iid projections.

    Depends on θ and r only through s = ‖x − y‖ = 2r sin(θ/2), not on d.
    """
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    s = 2 * r * np.sin(theta / 2)
    return np.array([_sign_negative_probability(float(v), int(m)) for v in s])


def negative_fraction(
    estimator: str, theta: np.ndarray, m: int, r: float = 1.0
) -> np.ndarray | None:
    """P(K̂ < 0) at each angle θ for an estimator with a closed form for it, else None.

    Only the [sin, cos] trig map with independent projections (``trig@iid``) has one here
    (:func:`trig_negative_probability`; CSE Fig. 4).

    Parameters
    ----------
    estimator : str
        A registry name.
    theta : ndarray, shape (n_angles,)
    m : int
        Projections.
    r : float
        ‖x‖ = ‖y‖.

    Returns
    -------
    ndarray, shape (n_angles,), or None
    """
    if estimator != "trig@iid" or m < 1:
        return None
    return trig_negative_probability(theta, m, r)
