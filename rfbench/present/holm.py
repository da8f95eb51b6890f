"""Holm's step-down procedure (Holm, Scand. J. Statist. 1979), the one family-wise correction of
the suite: ``rfbench compare`` flags rows with it and ``rfbench report`` decides which published
numbers *differ* with it."""

from __future__ import annotations

import numpy as np


def holm(p: np.ndarray, alpha: float) -> np.ndarray:
    """Which hypotheses Holm's procedure rejects at family-wise level ``alpha``.

    The k-th smallest p-value (k = 0, 1, ...) is rejected while every p-value up to it satisfies
    p_(j) ≤ α / (n − j); the first that does not stops the procedure.

    Parameters
    ----------
    p : ndarray of shape (n,)
        Two-sided p-values of the family.
    alpha : float
        Family-wise error rate.

    Returns
    -------
    ndarray of bool, shape (n,)
        True where the hypothesis is rejected (in the order of ``p``).
    """
    p = np.asarray(p, dtype=float)
    n = len(p)
    order = np.argsort(p, kind="stable")
    ok = p[order] <= alpha / (n - np.arange(n))
    stop = n if ok.all() else int(np.argmin(ok))
    hit = np.zeros(n, dtype=bool)
    hit[order[:stop]] = True
    return hit
