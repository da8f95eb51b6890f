"""Helpers shared by several experiments (no experiment imports another: they import this)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from rfbench.compute.features import registry
from rfbench.compute.features.base import Estimator


def row(
    metric: str, value: float, stderr: float | None = None, n_trials: int = 0, **columns: Any
) -> dict[str, Any]:
    """One tidy result row (docs/architecture.md#result-schema): the ``columns`` naming its point,
    then the metric, its value, standard error and number of draws (0: a closed form)."""
    return {
        **columns,
        "metric": metric,
        "value": float(value),
        "stderr": stderr,
        "n_trials": n_trials,
    }


def base_projections(budget: int, n: int) -> int:
    """The projections m per base estimator of a bipolar hybrid with n λ projections under a
    budget of M projections: m = M // n (at least 1), so m·n ≤ M (HRF Sec. 4;
    docs/methods.md#hrf-flop-matching)."""
    return max(1, budget // n)


def make(name: str, budget: int, n: int) -> Estimator:
    """The estimator ``name`` under a budget of M = ``budget`` projections: M projections for a
    non-hybrid, :func:`base_projections` per base and n for λ for a bipolar hybrid. (``m`` is
    always the estimator's projections, ``est.m``; the option ``projection_budget`` is M.)"""
    if registry.estimator_class(name).bipolar:  # sized before it is built, built once
        return registry.get(name, kernel="softmax", m=base_projections(budget, n), n=n)
    return registry.get(name, kernel="softmax", m=budget)


def sized(est: Estimator, budget: int) -> dict[str, int]:
    """The size columns of a row of ``est`` made by :func:`make` at ``budget``: ``m``, the
    projections it uses, and ``projection_budget`` = M where that differs (hybrids: m = M // n)."""
    return {"m": est.m} if est.m == budget else {"m": est.m, "projection_budget": budget}


def random_directions(rng: np.random.Generator, count: int, d: int, r: float) -> np.ndarray:
    """``count`` points of norm r in uniformly random directions of R^d."""
    g = rng.standard_normal((count, d))
    return r * g / np.linalg.norm(g, axis=1, keepdims=True)


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """The least wall seconds of ``repeats`` calls of ``fn`` (the least-disturbed run)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def widest(names: Iterable[str], m: int, n: int = 1, matched: bool = False) -> tuple[int, int]:
    """Upper bounds of (real feature entries per point, projections per draw) over the estimators
    ``names`` at m projections, for memory estimates: 2m features of m projections (complex
    entries count 2), or 4b(n + 1) of b(n + 1) for a hybrid of b base and n λ projections, where
    b = m, or m // n when ``matched`` (FLOP-matched as :func:`make` sizes them)."""
    names = [str(name) for name in names if known(str(name))]
    out = (2 * m, m) if names else (0, 0)
    if any(registry.estimator_class(name).kind == "hybrid" for name in names):
        base = base_projections(m, n) if matched else m
        out = max(out, (4 * base * (n + 1), base * (n + 1)))
    return out


def known(name: str) -> bool:
    """Whether the registry knows ``name`` (an unknown name is refused by validate_config)."""
    try:
        registry.describe(name)
    except (ValueError, TypeError, KeyError):
        return False
    return True
