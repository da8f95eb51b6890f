"""Anytime-valid confidence sequences and the sequential stopping rule
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
step-down over a family of such p-values read at a stopping time stays valid.

:func:`decide` is the stopping rule, written once: every comparison's CS excludes zero (or the
tolerance band ``[-tol, tol]``) → ``resolved``; else ``continue`` until the cap → ``cap``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import lambertw

#: the error rate of every sequence unless told (the report's tests are at 5 %)
ALPHA = 0.05
#: stop reasons written in a row's ``stop`` column
RESOLVED, CAP = "resolved", "cap"
#: what a family of comparisons asks (:func:`decide`): whether every difference is nonzero, or
#: whether the compared arm is the best (every difference above the band, or one below it)
EVERY, BEST = "every", "best"
#: the stopping rules a config's ``stop`` may name: fixed (every draw up to ``trials``) or
#: resolved (batches until every declared comparison is resolved, ``trials`` the cap)
STOP_RULES = ("fixed", "resolved")


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


def decide(
    differences: Mapping[str, np.ndarray],
    cap: int,
    t_opt: float,
    alpha: float = ALPHA,
    tol: float = 0.0,
    earlier: Mapping[str, Interval] | None = None,
    question: str = EVERY,
    groups: Sequence[Sequence[str]] = (),
) -> tuple[str | None, dict[str, Interval]]:
    """The stopping rule, once for every experiment: stop when the comparisons are resolved.

    Parameters
    ----------
    differences : mapping of str to ndarray, each shape (n,)
        Each declared comparison's per-draw observations so far (a paired difference of two
        estimators on draw i, or an estimate minus its closed form / published value).
    cap : int
        The most draws a cell may use (the config's ``trials``).
    t_opt : float
        Where the sequences are tuned to be tightest (:func:`rho2_for`).
    alpha : float
        Each comparison's error rate.
    tol : float
        A comparison is resolved when its interval excludes ``[-tol, tol]``.
    earlier : mapping of str to Interval, optional
        The readings at the previous look: each reading is intersected with its earlier one
        (:meth:`Interval.meet`), so the sequence is read only at the looks and a resolved
        comparison stays resolved.
    question : str
        :data:`EVERY`: resolved when every interval excludes the band; :data:`BEST` (each
        comparison an arm minus one rival): resolved when every interval lies above the band
        (the arm is the best) or any lies below it (it is not).
    groups : sequence of sequences of str
        With :data:`BEST`, the rival sets of several readings of the question (e.g. two readings
        of one method); resolved when the question is resolved for each of them. Empty: one
        reading, every comparison.

    Returns
    -------
    (reason, intervals)
        ``reason`` is :data:`RESOLVED` when every comparison's interval excludes the band,
        :data:`CAP` when the draws reached ``cap`` first, None to draw another batch; the
        intervals are each comparison's reading now.
    """
    earlier = earlier or {}
    readings = {
        name: interval(x, t_opt, alpha).meet(earlier.get(name)) for name, x in differences.items()
    }
    n = min((r.n for r in readings.values()), default=0)
    if readings and len(settled(readings, tol, question, groups)) == len(readings):
        return RESOLVED, readings
    if n >= cap:
        return CAP, readings
    return None, readings


def settled(
    readings: Mapping[str, Interval],
    tol: float = 0.0,
    question: str = EVERY,
    groups: Sequence[Sequence[str]] = (),
) -> set[str]:
    """The comparisons whose answer no further draw can change (:func:`decide`'s question, read
    comparison by comparison): with :data:`EVERY`, each whose interval excludes ``[-tol, tol]``;
    with :data:`BEST`, in each reading (``groups``, default one of every comparison) every
    comparison once one lies below the band (the arm is not the best of that reading), else each
    that lies above it. A comparison counts as settled when it is in every reading it belongs to.
    The question is resolved when every comparison is settled."""
    if question not in (EVERY, BEST):
        raise ValueError(f"question must be {EVERY!r} or {BEST!r}, got {question!r}")
    if question == EVERY:
        return {k for k, r in readings.items() if r.excludes(tol)}
    open_: set[str] = set()
    for group in groups or [list(readings)]:
        if not any(readings[k].high < -tol for k in group):
            open_.update(k for k in group if readings[k].low <= tol)
    return set(readings) - open_


#: what a comparison subtracts from its estimator's draws: another arm's draws on the same draw
#: index (a paired difference), or a number (a closed form or a published value)
Other = str | float


@dataclass(frozen=True)
class Sampled:
    """What :func:`sample_until_resolved` drew and why it stopped."""

    #: arm -> its per-draw statistic, shape (n_arm,): an arm stops drawing once every comparison
    #: it is in is settled (:func:`settled`), so arms may differ in n
    values: dict[str, np.ndarray]
    #: :data:`RESOLVED` or :data:`CAP`: why the last arms stopped
    reason: str
    #: comparison name -> its anytime-valid reading at its stopping time
    readings: dict[str, Interval]
    #: the sample size the sequences were tuned for
    t_opt: float
    #: the arms that stopped early, their comparisons resolved before the cell's last
    retired: frozenset[str] = frozenset()

    @property
    def n(self) -> int:
        """The draws of the arms that drew longest."""
        return max((len(v) for v in self.values.values()), default=0)

    def reason_of(self, arm: str) -> str:
        """Why ``arm`` stopped: :data:`RESOLVED` if its comparisons settled early, else
        :attr:`reason`."""
        return RESOLVED if arm in self.retired else self.reason


def sample_until_resolved(
    draw: Callable[[int, int], Mapping[str, np.ndarray]],
    comparisons: Mapping[str, tuple[str, Other]],
    cap: int,
    batch: int,
    *,
    first: int | None = None,
    t_opt: float | None = None,
    alpha: float = ALPHA,
    tol: float = 0.0,
    question: str = EVERY,
    groups: Sequence[Sequence[str]] = (),
) -> Sampled:
    """Draw batches until every declared comparison is resolved or the draws reach ``cap``.

    The rule of docs/architecture.md#sequential-draws: after each batch, every comparison's
    asymptotic confidence sequence (:func:`decide`) is read; the cell stops when the family's
    question is resolved (every interval excludes zero or ``[-tol, tol]``; or, for
    :data:`BEST`, whether one arm beats every rival). Each comparison stops on its own: an arm
    draws no further once every comparison it is in is settled (:func:`settled`), and each
    comparison's reading is the one at its own stopping time (still valid: the sequence holds at
    every time at once). A comparison ``(a, b)`` reads ``x_a[i] − x_b[i]`` over the draws both
    have: paired by draw index, which is valid whether the arms share draws (the variance of the
    difference is then smaller) or come from independent streams (the pairs are still i.i.d.).

    Parameters
    ----------
    draw : callable (batch index, size, arms) -> mapping of arm -> ndarray of shape (size,)
        Draws batch ``i`` of each of ``arms`` (the arms still drawing); batch ``i`` of an arm must
        depend only on ``i``, ``size`` and the arm (draw each batch from a keyed stream,
        :func:`rfbench.compute.seeding.substream`), so the stopping point is the same on any
        backend or worker count.
    comparisons : mapping of str to (arm, other)
        Name -> the arm and what it is compared with: another arm, or a number.
    cap : int
        The most draws per arm.
    batch : int
        Draws per batch after the first.
    first : int, optional
        Draws of the first batch (default ``batch``), e.g. the draws a tuning step already used.
    t_opt : float, optional
        Where the sequences are tightest (default ``cap / 5``: within 4 % of the narrowest width
        from ``cap / 10`` to ``cap`` at α = 0.05).
    alpha, tol : float
        As for :func:`decide`.
    question : str
        As for :func:`decide`: :data:`EVERY` comparison nonzero, or is the arm the :data:`BEST`.
    groups : sequence of sequences of str
        As for :func:`decide`.

    Returns
    -------
    Sampled
    """
    if cap < 1 or batch < 1:
        raise ValueError(f"need cap >= 1 and batch >= 1, got {cap}, {batch}")
    t_opt = t_opt if t_opt is not None else max(cap / 5.0, 2.0)
    parts: dict[str, list[np.ndarray]] = {}
    n, i = 0, 0
    readings: dict[str, Interval] = {}
    live: set[str] | None = None  # every arm draw() gives, until the first look
    while True:
        size = min(first if (i == 0 and first) else batch, cap - n)
        for arm, values in draw(i, size, live).items():
            parts.setdefault(arm, []).append(np.asarray(values, dtype=np.float64).reshape(size))
        n, i = n + size, i + 1
        values = {arm: np.concatenate(chunks) for arm, chunks in parts.items()}
        differences = {
            name: _paired(values, arm, other) for name, (arm, other) in comparisons.items()
        }
        reason, readings = decide(differences, cap, t_opt, alpha, tol, readings, question, groups)
        if reason is None and n >= cap:
            reason = CAP
        if reason is not None:
            retired = frozenset(values) - (set(values) if live is None else live)
            return Sampled(values, reason, readings, t_opt, retired)
        done = settled(readings, tol, question, groups)
        open_arms = {x for k, pair in comparisons.items() if k not in done for x in pair}
        compared = {x for pair in comparisons.values() for x in pair}
        live = {a for a in values if a in open_arms or a not in compared}


def _paired(values: Mapping[str, np.ndarray], arm: str, other: Other) -> np.ndarray:
    """``arm``'s draws minus ``other``'s on the draws both have (or minus a number)."""
    if not isinstance(other, str):
        return values[arm] - float(other)
    k = min(len(values[arm]), len(values[other]))
    return values[arm][:k] - values[other][:k]


def select_best(
    evaluate: Callable[[Any, int, int], np.ndarray],
    arms: Sequence[Any],
    n: int,
    look: int,
    *,
    t_opt: float | None = None,
    alpha: float = ALPHA,
) -> tuple[Any, dict[Any, np.ndarray]]:
    """The arm of largest mean over shared draws, dropping arms once clearly behind the leader.

    Successive elimination on paired confidence sequences: every ``look`` draws, each surviving
    arm's difference to the current leader (the largest mean; the first in ``arms`` on a tie) is
    read on the draws both have; an arm whose interval lies wholly below zero is dropped and
    evaluated no further. It ends with one arm left or after ``n`` draws, and picks the largest
    mean among the survivors (the first on a tie), so it agrees with the argmax over all ``n``
    draws unless a dropped arm would have overtaken one that led it by a resolved margin.

    Parameters
    ----------
    evaluate : callable (arm, start, stop) -> ndarray of shape (stop - start,)
        The statistic of draws ``start`` to ``stop`` (shared by every arm) for ``arm``.
    arms : sequence
        The candidates, in the order that breaks ties.
    n : int
        The most draws.
    look : int
        Draws between looks (no arm is dropped on fewer draws than one look).
    t_opt, alpha : float
        As for :func:`asymptotic_cs` (``t_opt`` default ``n / 2``).

    Returns
    -------
    (best arm, arm -> its draws' values, shape (n_arm,))
    """
    t_opt = t_opt if t_opt is not None else max(n / 2.0, 2.0)
    values: dict[Any, list[np.ndarray]] = {arm: [] for arm in arms}
    alive = list(arms)
    done = 0
    while done < n and len(alive) > 1:
        stop = min(n, done + look)
        for arm in alive:
            values[arm].append(np.asarray(evaluate(arm, done, stop), dtype=np.float64))
        done = stop
        drawn = {arm: np.concatenate(values[arm]) for arm in alive}
        means = [drawn[arm].mean() for arm in alive]
        leader = alive[int(np.argmax(means))]
        if done < look:  # fewer draws than a look: too few to judge a spread
            continue
        alive = [
            arm
            for arm in alive
            if arm == leader or interval(drawn[arm] - drawn[leader], t_opt, alpha).high >= 0
        ]
    if done == 0:  # a single arm: its n draws all the same
        values[alive[0]].append(np.asarray(evaluate(alive[0], 0, n), dtype=np.float64))
    drawn = {arm: np.concatenate(v) for arm, v in values.items() if v}
    best = alive[int(np.argmax([drawn[arm].mean() for arm in alive]))]
    return best, drawn
