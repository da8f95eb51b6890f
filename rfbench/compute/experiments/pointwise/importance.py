"""Importance-sampled MSE of i.i.d. component estimators (metrics ``is_mse``, ``is_rel_rmse``).

For K̂ = (1/m) Σ_i f(ω_i) with i.i.d. ω_i ~ p = N(0, I_d) and E_p f = K (unbiased),
MSE = Var(f)/m = E_p[(f - K)²]/m = E_q[(f - K)² p/q]/m for any law q covering the support.
The second moment of an exponential-type term f ∝ e^{ωᵀa} (positive; hyperbolic: cosh, ±a) is
carried by the tilted law N(2a, I) (``rfbench.compute.features.theory.resolution``), which the
nominal sample never reaches at large ‖a‖. We draw instead from the defensive mixture (Hesterberg
1995)
    q = β·N(0, I) + (1 - β)·mean_k N(μ_k, I),   μ_k ∈ {2a} (positive), {±2a} (hyperbolic),
with exact likelihood ratios p/q = 1/(β + (1-β) mean_k e^{μ_kᵀω - ‖μ_k‖²/2}), so (f - K)²p/q is
bounded and the estimate of Var f is unbiased with a small variance. Bounded components (trig)
use q = p.
f(ω) is evaluated by the estimator's own feature maps (one projection per draw), in a 2-D frame
holding x and y (these components see ω only through ωᵀx, ωᵀy; ‖ω‖² gets its χ²_{d-2} rest).

Each value comes with its standard error std(h)/(m√n), h = (f - K)²p/q, and a ``resolved`` flag:
the Kish effective sample size (Σh)²/Σh² of the terms h is at least ``MIN_TAIL_DRAWS``.
"""

from __future__ import annotations

import numpy as np

from rfbench.compute.features.base import Estimator, Projections
from rfbench.compute.features.theory.resolution import MIN_TAIL_DRAWS
from rfbench.compute.stats import standard_error

IS_MSE = "is_mse"
IS_REL_RMSE = "is_rel_rmse"
METRICS = (IS_MSE, IS_REL_RMSE)

#: Weight β of the nominal law in the defensive mixture.
DEFENSIVE = 0.2


def supports(est: Estimator) -> bool:
    """Whether :func:`importance_mse` applies: an unbiased estimator that declares the tilts of its
    importance sampler (``Estimator.importance_tilts``: a component on independent rows)."""
    return est.importance_tilts is not None and est.unbiased


def _draw(rng: np.random.Generator, shifts: np.ndarray, n: int, d: int) -> np.ndarray:
    """n draws in the 2-D frame from the defensive mixture (shifts: (K, 2))."""
    omega = rng.standard_normal((n, 2))
    if len(shifts):
        which = rng.integers(len(shifts), size=n)
        tilted = rng.random(n) >= DEFENSIVE
        omega[tilted] += shifts[which[tilted]]
    return omega


def _likelihood_ratio(omega: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """p/q at each draw (exact)."""
    if not len(shifts):
        return np.ones(len(omega))
    log_terms = omega @ shifts.T - 0.5 * np.sum(shifts**2, axis=1)
    peak = np.max(log_terms, axis=1, keepdims=True)
    mixture = np.mean(np.exp(log_terms - peak), axis=1) * np.exp(peak[:, 0])
    with np.errstate(over="ignore"):
        return 1.0 / (DEFENSIVE + (1 - DEFENSIVE) * mixture)


def importance_mse(
    est: Estimator,
    x: np.ndarray,
    y: np.ndarray,
    true: np.ndarray,
    n: int,
    rng: np.random.Generator,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """{metric: (values, stderrs, resolved)} per pair (x_a, y_a) of 2-D-frame inputs (A, d)."""
    signs = np.asarray(est.importance_tilts)
    d = x.shape[-1]
    out = {k: (np.empty(len(x)), np.empty(len(x)), np.empty(len(x), bool)) for k in METRICS}
    for a in range(len(x)):
        shifts = signs[:, None] * (x[a, :2] + y[a, :2])[None, :]
        omega = _draw(rng, shifts, n, d)
        full = np.sum(omega**2, axis=1) + (rng.chisquare(d - 2, size=n) if d > 2 else 0.0)
        draw = est.draw_from(Projections(omega[:, None, :], full[:, None], d))
        f = est.estimate(draw, x[a : a + 1, :2], y[a : a + 1, :2])[:, 0, 0]
        h = (f - true[a]) ** 2 * _likelihood_ratio(omega, shifts)  # E_p f = K: E_q h = Var f
        mse = h.mean() / est.m
        se = standard_error(h, axis=0) / est.m
        ok = h.sum() ** 2 >= MIN_TAIL_DRAWS * np.sum(h**2)
        rel = np.sqrt(max(mse, 0.0)) / true[a]
        rel_se = se / (2 * np.sqrt(mse) * true[a]) if mse > 0 else np.nan
        for key, value, err in ((IS_MSE, mse, se), (IS_REL_RMSE, rel, rel_se)):
            out[key][0][a], out[key][1][a], out[key][2][a] = value, err, ok
    return out
