"""Anytime-valid confidence sequences, their p-values and Holm's step-down
(docs/architecture.md#sequential-draws).

A confidence sequence (CS) is a sequence of intervals ``C_t`` that hold at every sample size at
once: ``P(∃t: μ ∉ C_t) ≤ α``. One may therefore look after every batch of draws and stop when a
comparison is resolved without inflating the error rate, and the interval read at the stopping
time is valid (Howard, Ramdas, McAuliffe & Sekhon, Ann. Statist. 2021, arXiv 1810.08240, Sec. 1).

Two sequences, both vectorised over leading axes (many runs at once):

* :func:`asymptotic_cs`: the asymptotic CS of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas
  (Ann. Statist. 2024, arXiv 2103.06476), Theorem 2.2: the two-sided Robbins normal-mixture
  boundary with the running sample variance plugged in,
  ``μ̂_t ± σ̂_t √(2(tρ² + 1)/(t²ρ²) · log(√(tρ² + 1)/α))``, valid as t grows for any i.i.d.
  sequence with a finite (2 + δ)-th moment. ρ tunes where the sequence is tightest
  (:func:`rho2_for`): the width is smallest at ``t*`` for ``ρ² = (−W₋₁(−α²/e) − 1)/t*``.
* :func:`bernstein_cs`: the predictable plug-in empirical-Bernstein CS of Waudby-Smith & Ramdas
  (JRSS-B 2024, arXiv 2010.09686), Theorem 2 with the tuning of their eq. (13); exact
  (non-asymptotic) for observations bounded in a known ``[lo, hi]``.

:func:`anytime_p_value` is the asymptotic sequence's p-value: ``p_t = 1/M_t`` with ``M_t`` the
normal-mixture statistic, running-minimised, so ``P(∃t: p_t ≤ α) ≤ α`` under the null and Holm's
step-down over a family of such p-values read at a stopping time stays valid. :class:`Interval`
is one comparison's reading at a look (:func:`interval`, :func:`bounded_interval`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.special import lambertw

#: the error rate of every sequence unless told (the report's tests are at 5 %)
ALPHA = 0.05


def rho2_for(t_opt: float, alpha: float = ALPHA) -> float:
    """ρ² of the unit-variance normal mixture whose two-sided boundary is narrowest at ``t_opt``.

    Minimising ``(x/(x − 1)) log(x/α²)`` over ``x = t ρ² + 1`` gives ``x − 1 = log(x/α²)``,
    solved by the lower branch of Lambert's W: ``x = −W₋₁(−α²/e)`` (Waudby-Smith et al. 2024,
    arXiv 2103.06476, Sec. 2.2 and App. B.2).

    Parameters
    ----------
    t_opt : float
        The sample size (> 0) at which the sequence should be tightest.
    alpha : float
        The error rate in (0, 1).

    Returns
    -------
    float
    """
    if not t_opt > 0 or not 0 < alpha < 1:
        raise ValueError(f"need t_opt > 0 and 0 < alpha < 1, got {t_opt}, {alpha}")
    x = -lambertw(-(alpha**2) / math.e, k=-1).real
    return float((x - 1.0) / t_opt)


def mixture_margin(t: np.ndarray, rho2: float, alpha: float = ALPHA) -> np.ndarray:
    """The unit-variance two-sided normal-mixture margin at sample sizes ``t`` (Theorem 2.2).

    Parameters
    ----------
    t : array_like of int, any shape
        Sample sizes ≥ 1.
    rho2 : float
        The mixture's variance ρ² (:func:`rho2_for`).
    alpha : float
        The error rate.

    Returns
    -------
    ndarray, the shape of ``t``
        ``√(2(tρ² + 1)/(t²ρ²) · log(√(tρ² + 1)/α))``: the CS is ``μ̂_t ± σ̂_t ×`` this.
    """
    t = np.asarray(t, dtype=np.float64)
    x = t * rho2 + 1.0
    return np.sqrt(2.0 * x / (t * t * rho2) * np.log(np.sqrt(x) / alpha))


def _running(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t, running mean, running sample sd with ddof = 1, 0 at t = 1) along the last axis."""
    t = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    mean = np.cumsum(x, axis=-1) / t
    # Welford-free but shifted by the first value, so large offsets cost no precision
    shifted = x - x[..., :1]
    s1 = np.cumsum(shifted, axis=-1)
    s2 = np.cumsum(shifted * shifted, axis=-1)
    var = np.maximum(s2 - s1 * s1 / t, 0.0) / np.maximum(t - 1.0, 1.0)
    return t, mean, np.sqrt(var)


def asymptotic_cs(
    x: np.ndarray, t_opt: float, alpha: float = ALPHA
) -> tuple[np.ndarray, np.ndarray]:
    """The asymptotic confidence sequence of the mean at every prefix of ``x`` (Theorem 2.2).

    Parameters
    ----------
    x : ndarray, shape (..., n)
        Observations in order along the last axis (leading axes: independent sequences).
    t_opt : float
        The sample size at which the sequence is tuned to be tightest (:func:`rho2_for`).
    alpha : float
        The error rate: the sequence misses the mean at some t with probability ≤ α
        asymptotically.

    Returns
    -------
    (lower, upper) : ndarrays, shape (..., n)
        The interval after 1, 2, …, n observations (the running intersection is not taken: a
        row reports the interval at its stopping time).
    """
    x = np.asarray(x, dtype=np.float64)
    t, mean, sd = _running(x)
    half = sd * mixture_margin(t, rho2_for(t_opt, alpha), alpha)
    return mean - half, mean + half


def anytime_p_value(
    x: np.ndarray, t_opt: float, alpha: float = ALPHA, running: bool = True
) -> np.ndarray:
    """The anytime-valid p-value of ``mean = 0`` after every prefix of ``x``.

    ``p_t = min_{s ≤ t} min(1, √(sρ² + 1) · exp(−ρ² s² μ̂_s² / (2 σ̂_s² (sρ² + 1))))``, the
    reciprocal of the normal-mixture statistic (Waudby-Smith et al. 2024, Sec. 2 and eq. (5)):
    ``p_t ≤ a`` exactly when the sequence at level ``a`` (ρ tuned with ``alpha``) excludes 0.

    Parameters
    ----------
    x : ndarray, shape (..., n)
    t_opt : float
        As for :func:`asymptotic_cs`.
    alpha : float
        The level ρ is tuned for (the p-value itself is valid at every level).
    running : bool
        Take the running minimum (the anytime-valid p-value); False: ``1/M_t`` at each t alone.

    Returns
    -------
    ndarray, shape (..., n)
    """
    x = np.asarray(x, dtype=np.float64)
    t, mean, sd = _running(x)
    rho2 = rho2_for(t_opt, alpha)
    v = t * rho2 + 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = rho2 * (t * mean) ** 2 / (2.0 * sd * sd * v)
    exponent = np.where(sd > 0, exponent, np.where(mean != 0, np.inf, 0.0))
    p = np.minimum(1.0, np.sqrt(v) * np.exp(-exponent))
    p[..., 0] = 1.0  # one observation has no spread to measure
    return np.minimum.accumulate(p, axis=-1) if running else p


def bernstein_cs(
    x: np.ndarray, lo: float, hi: float, alpha: float = ALPHA, cap: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """The predictable plug-in empirical-Bernstein confidence sequence (exact, bounded data).

    Waudby-Smith & Ramdas (JRSS-B 2024, arXiv 2010.09686), Theorem 2 with the predictable
    λ of their eq. (13), for observations in ``[lo, hi]`` rescaled to [0, 1]:
    ``λ_t = min(√(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), cap)``,
    ``μ̂_t = (½ + Σ x)/(t + 1)``, ``σ̂²_t = (¼ + Σ (x − μ̂)²)/(t + 1)``,
    ``ψ(λ) = (−log(1 − λ) − λ)/4``, ``v_i = 4 (x_i − μ̂_{i−1})²``, and the interval
    ``Σλx/Σλ ± (log(2/α) + Σ v ψ(λ))/Σλ``.

    Parameters
    ----------
    x : ndarray, shape (..., n)
        Observations in ``[lo, hi]``.
    lo, hi : float
        The known bounds (``lo < hi``).
    alpha : float
        The error rate: ``P(∃t: μ ∉ C_t) ≤ α`` for every n (non-asymptotic).
    cap : float
        The largest λ (the paper's c ∈ (0, 1); ½ or ¾ in its experiments).

    Returns
    -------
    (lower, upper) : ndarrays, shape (..., n), clipped to ``[lo, hi]``.
    """
    if not hi > lo:
        raise ValueError(f"need lo < hi, got [{lo}, {hi}]")
    x = np.asarray(x, dtype=np.float64)
    if np.any(x < lo) or np.any(x > hi):
        raise ValueError(f"observations outside their declared bounds [{lo}, {hi}]")
    y = (x - lo) / (hi - lo)
    n = y.shape[-1]
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(y, axis=-1)) / (t + 1.0)
    mu_prev = np.concatenate([np.full(y.shape[:-1] + (1,), 0.5), mu[..., :-1]], axis=-1)
    sq = (y - mu) ** 2
    var = (0.25 + np.cumsum(sq, axis=-1)) / (t + 1.0)
    var_prev = np.concatenate([np.full(y.shape[:-1] + (1,), 0.25), var[..., :-1]], axis=-1)
    log_term = math.log(2.0 / alpha)
    lam = np.minimum(np.sqrt(2.0 * log_term / (var_prev * t * np.log1p(t))), cap)
    psi = (-np.log1p(-lam) - lam) / 4.0
    v = 4.0 * (y - mu_prev) ** 2
    sum_lam = np.cumsum(lam, axis=-1)
    centre = np.cumsum(lam * y, axis=-1) / sum_lam
    half = (log_term + np.cumsum(v * psi, axis=-1)) / sum_lam
    lower = np.clip(centre - half, 0.0, 1.0) * (hi - lo) + lo
    upper = np.clip(centre + half, 0.0, 1.0) * (hi - lo) + lo
    return lower, upper


def holm(p: Mapping[str, float], alpha: float = ALPHA) -> dict[str, bool]:
    """Holm's step-down over a family of (anytime-valid) p-values: name -> rejected at ``alpha``.

    Parameters
    ----------
    p : mapping of str to float
        The family's p-values (e.g. :func:`anytime_p_value` at each comparison's stopping time).
    alpha : float
        The family-wise error rate.

    Returns
    -------
    dict of str to bool
    """
    order = sorted(p, key=lambda k: p[k])
    out = {k: False for k in p}
    for i, name in enumerate(order):
        if p[name] > alpha / (len(order) - i):
            break
        out[name] = True
    return out


@dataclass(frozen=True)
class Interval:
    """One comparison's anytime-valid reading after ``n`` paired observations."""

    #: observations (draws) read
    n: int
    mean: float
    low: float
    high: float
    #: the anytime-valid p-value of ``mean = 0`` (asymptotic sequence)
    p: float

    def meet(self, earlier: Interval | None) -> Interval:
        """The running intersection with an earlier reading (still a confidence sequence; its
        p-value the running minimum), so that a verdict once reached stands."""
        if earlier is None:
            return self
        return Interval(self.n, self.mean, max(self.low, earlier.low),
                        min(self.high, earlier.high), min(self.p, earlier.p))  # fmt: skip

    def excludes(self, tol: float = 0.0) -> bool:
        """Whether the interval lies wholly outside ``[-tol, tol]``."""
        return self.low > tol or self.high < -tol


def interval(x: np.ndarray, t_opt: float, alpha: float = ALPHA) -> Interval:
    """The asymptotic CS and anytime p-value of a paired-difference sample after all of ``x``.

    Parameters
    ----------
    x : ndarray, shape (n,)
        The observations so far (n ≥ 2 for a finite interval).
    t_opt, alpha : float
        As for :func:`asymptotic_cs`.

    Returns
    -------
    Interval
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size < 2:
        return Interval(
            int(x.size), float(x.mean()) if x.size else math.nan, -math.inf, math.inf, 1.0
        )
    low, high = asymptotic_cs(x, t_opt, alpha)
    p = anytime_p_value(x, t_opt, alpha, running=False)
    return Interval(int(x.size), float(x.mean()), float(low[-1]), float(high[-1]), float(p[-1]))


def bounded_interval(x: np.ndarray, lo: float, hi: float, alpha: float = ALPHA) -> Interval:
    """The exact empirical-Bernstein reading of the mean of ``x`` after all of it, for
    observations known before any draw to lie in ``[lo, hi]`` (:func:`bernstein_cs`).

    Its p-value is the smallest level whose sequence excludes 0 at some prefix (bisection over α
    on a log scale, to a relative 1 %; 1 when even α = 1/2 does not): the anytime-valid p-value
    of ``mean = 0`` that Holm's step-down may use at a stopping time.

    Parameters
    ----------
    x : ndarray, shape (n,)
        Observations in ``[lo, hi]`` (a ValueError names any outside).
    lo, hi : float
        The known bounds (``lo < hi``).
    alpha : float
        The error rate of ``low`` and ``high``.

    Returns
    -------
    Interval
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return Interval(0, math.nan, lo, hi, 1.0)
    low, high = bernstein_cs(x, lo, hi, alpha)
    low, high = float(np.max(low)), float(np.min(high))  # the running intersection

    def excludes(a: float) -> bool:
        lo_a, hi_a = bernstein_cs(x, lo, hi, a)
        return bool(np.max(lo_a) > 0 or np.min(hi_a) < 0)

    p = 1.0
    if excludes(0.5):
        top, bottom = math.log(0.5), math.log(1e-12)
        if excludes(1e-12):
            top = bottom
        while top - bottom > 0.01:
            mid = (top + bottom) / 2
            top, bottom = (mid, bottom) if excludes(math.exp(mid)) else (top, mid)
        p = math.exp(top)
    return Interval(int(x.size), float(x.mean()), low, high, p)
