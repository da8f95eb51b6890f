"""The sequential stopping rule, written once (docs/architecture.md#sequential-draws).

:func:`decide` reads every declared comparison's confidence sequence
(:mod:`rfbench.compute.sequential.confidence`) after a batch: every comparison's CS excludes zero
(or the tolerance band ``[-tol, tol]``) → ``resolved``; else ``continue`` until the cap → ``cap``.
:func:`settled` reads the same question comparison by comparison, so that
:func:`sample_until_resolved` stops each arm once its comparisons are settled;
:func:`select_best` is successive elimination over arms that share draws (a tuning grid).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfbench.compute.sequential.confidence import ALPHA, Interval, interval

#: stop reasons written in a row's ``stop`` column
RESOLVED, CAP = "resolved", "cap"
#: what a family of comparisons asks (:func:`decide`): whether every difference is nonzero, or
#: whether the compared arm is the best (every difference above the band, or one below it)
EVERY, BEST = "every", "best"
#: the stopping rules a config's ``stop`` may name: fixed (every draw up to ``trials``) or
#: resolved (batches until every declared comparison is resolved, ``trials`` the cap)
STOP_RULES = ("fixed", "resolved")


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
