"""Equal feature budgets: every method of the attention experiment at the same number of features.

Issue 16 settled that estimators are compared at equal *features* (the width of φ(q)), not equal
projections: a map with l features per projection ω_i (hyperbolic and trig: l = 2, the estimator's
``features_per_projection``) gets m = ⌊F/l⌋ projections at budget F. An estimator with no
per-projection terms (Nyström: m landmarks, m features) gets m = F; a deterministic map of fixed
width (taylor2: 1 + d + d(d+1)/2) is measured at its own width, which its rows print
(docs/experiments.md#attention).
"""

from __future__ import annotations

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
