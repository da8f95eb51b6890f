"""Multiple-testing statistics shared by the presentation layer (compare's flags, the attention
summary, figures and report): one copy of each procedure."""

from __future__ import annotations

import numpy as np


def holm(p: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down procedure (Holm 1979): which p-values (shape (n,)) to reject at family-wise
    error rate ``alpha``; a boolean array of shape (n,).
    """
    p = np.asarray(p, dtype=float)
    n = p.size
    order = np.argsort(p, kind="stable")
    passed = p[order] < alpha / (n - np.arange(n))
    stop = int(np.argmin(passed)) if not passed.all() else n
    hit = np.zeros(n, bool)
    hit[order[:stop]] = True
    return hit
