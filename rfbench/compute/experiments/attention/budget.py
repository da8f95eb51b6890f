"""Equal feature budgets (issue 16): a map with l features per projection gets m = ⌊F/l⌋
projections at budget F (docs/experiments.md#attention, "Equal feature budgets").
"""

from __future__ import annotations

from rfbench.compute.features import registry
from rfbench.compute.features.base import Estimator


def features_per_projection(est: Estimator) -> int:
    """l, the features each projection gives (1 when the estimator has no per-projection terms)."""
    return est.features_per_projection or 1


def projections(est: Estimator, features: int) -> int:
    """m = ⌊F/l⌋, the projections ``est`` gets at feature budget ``features`` (≥ 0).

    Parameters
    ----------
    est : Estimator
        Any estimator (built at any m: only its features per projection is read).
    features : int
        The budget F.

    Returns
    -------
    int
        0 when a single projection already exceeds the budget.
    """
    return features // features_per_projection(est)


def estimator(name: str, features: int) -> Estimator:
    """The softmax estimator ``name`` with its :func:`projections` at feature budget
    ``features``."""
    one = registry.get(name, kernel="softmax", m=1)
    return registry.get(name, kernel="softmax", m=projections(one, features))
