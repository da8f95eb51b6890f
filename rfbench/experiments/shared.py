"""Helpers shared by several experiments (no experiment imports another: they import this)."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from rfbench.features import registry
from rfbench.features.base import Estimator


def make(name: str, m: int, n: int) -> Estimator:
    """The estimator ``name`` with M = m projections (bipolar hybrids: m // n per base and n for
    λ, m·n = M as in HRF Sec. 4)."""
    if registry.describe(name).bipolar:
        return registry.get(name, kernel="softmax", m=max(1, m // n), n=n)
    return registry.get(name, kernel="softmax", m=m)


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
