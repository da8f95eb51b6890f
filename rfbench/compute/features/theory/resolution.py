"""Does a Monte Carlo sample resolve a moment of a heavy-tailed estimator? (the ``resolved`` flag;
docs/methods.md#heavy-tails)

The k-th moment of an exponential feature term (HRF Eq. 3, DERF Thm 4.1) is carried by the tilted
Gaussian law with mean μ_k; a sample of n projections resolves it when n·Φ̄(‖μ_k‖) ≥
``MIN_TAIL_DRAWS``. Bounded features are always resolved; bipolar hybrids are decided by their SM⁺⁺
part; laws that are not marginally Gaussian and other families are not assessed (None)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import log_ndtr

from rfbench.compute.features.base import Estimator
from rfbench.compute.features.derf import MECHANISMS
from rfbench.compute.text import family_of

#: Expected draws in the region carrying a moment for the sample to resolve it.
MIN_TAIL_DRAWS = 30.0

BOUNDED = frozenset({"trig", "sign"})
EXPONENTIAL = frozenset({"positive", "hyperbolic"})


def assessable(est: Estimator) -> bool:
    """Whether the criterion covers ``est`` (its family and its projections' law)."""
    head = family_of(est.name)
    weights = getattr(est, "weights", None)
    if weights is not None and not getattr(weights, "marginally_gaussian", False):
        return head in BOUNDED
    return est.bipolar or head in BOUNDED | EXPONENTIAL | set(MECHANISMS)


def _tilt_maps(
    est: Estimator, order: int, params: dict[str, Any] | None
) -> tuple[np.ndarray, np.ndarray] | str | None:
    """(P1, P2) with the tilted mean μ_k = P1 x + P2 y (as row maps: x @ P1), "bounded",
    "infinite", or None (not assessed)."""
    if not assessable(est):
        return None
    head = family_of(est.name)
    if head in BOUNDED:
        return "bounded"
    if head in EXPONENTIAL or est.bipolar:  # a bipolar hybrid: by its SM⁺⁺ part
        return np.asarray(float(order)), np.asarray(float(order))
    derf = (params or {}).get("derf")
    if derf is None:
        return None
    denom = 1.0 - 4.0 * order * np.asarray(derf.a, dtype=float)
    if np.any(denom <= 0):
        return "infinite"
    return order * derf.B1.T / denom, order * derf.B2.T / denom


def _apply(P: np.ndarray, X: np.ndarray) -> np.ndarray:
    return P * X if P.ndim == 0 else X @ P


def pairs_resolved(
    est: Estimator,
    X: np.ndarray,
    Y: np.ndarray,
    samples: int,
    order: int = 2,
    params: dict[str, Any] | None = None,
) -> bool | None:
    """Whether ``samples`` estimates resolve the moment at every pair (x_i, y_j) of two sets
    (a Gram-matrix or pair-set statistic): decided by the pair with the largest ‖μ_k‖, found in
    O(N·N') memory. None if not assessed."""
    maps = _tilt_maps(est, order, params)
    if maps is None or isinstance(maps, str):
        return None if maps is None else maps == "bounded"
    U, V = _apply(maps[0], np.asarray(X, float)), _apply(maps[1], np.asarray(Y, float))
    sq = np.sum(U**2, axis=1)[:, None] + np.sum(V**2, axis=1)[None, :] + 2 * U @ V.T
    norm = np.sqrt(max(float(sq.max()), 0.0))
    return bool(_tail_draws(est, samples, norm) >= MIN_TAIL_DRAWS)


def expected_tail_draws(
    est: Estimator,
    x: np.ndarray,
    y: np.ndarray,
    samples: int,
    order: int = 2,
    params: dict[str, Any] | None = None,
) -> np.ndarray | None:
    """n·Φ̄(‖μ_k‖): expected projections of ``samples`` estimates in the region carrying E f^k,
    ‖μ_k‖ the norm of the tilted mean at pairs x, y (..., d) (inf if bounded, 0 if E f^k = ∞)."""
    maps = _tilt_maps(est, order, params)
    if maps is None:
        return None
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if isinstance(maps, str):
        shape = np.broadcast_shapes(x.shape, y.shape)[:-1]
        return np.full(shape, np.inf if maps == "bounded" else 0.0)
    norm = np.sqrt(np.sum((_apply(maps[0], x) + _apply(maps[1], y)) ** 2, axis=-1))
    return np.where(norm == 0, np.inf, _tail_draws(est, samples, norm))


def _tail_draws(est: Estimator, samples: int, norm: np.ndarray | float) -> np.ndarray | float:
    """n·Φ̄(‖μ_k‖): projections of ``samples`` estimates expected beyond the tilted mean."""
    # the projections carrying the heavy tail: m (hybrids: the m SM⁺⁺ rows)
    return samples * int(est.m) * np.exp(log_ndtr(-np.asarray(norm)))


def resolved(
    est: Estimator,
    x: np.ndarray,
    y: np.ndarray,
    samples: int,
    order: int = 2,
    params: dict[str, Any] | None = None,
) -> np.ndarray | None:
    """Whether ``samples`` estimates resolve the ``order``-th moment at each pair (None: not
    assessed). See the module docstring for the criterion."""
    count = expected_tail_draws(est, x, y, samples, order, params)
    return None if count is None else np.asarray(count >= MIN_TAIL_DRAWS)


def draws_needed(
    est: Estimator, x: np.ndarray, y: np.ndarray, order: int = 2, params: dict | None = None
) -> np.ndarray | None:
    """The smallest number of estimates that would resolve the moment (inf if it is infinite)."""
    count = expected_tail_draws(est, x, y, 1, order, params)
    if count is None:
        return None
    with np.errstate(divide="ignore"):
        return np.where(np.isinf(count), 1.0, np.ceil(MIN_TAIL_DRAWS / count))
