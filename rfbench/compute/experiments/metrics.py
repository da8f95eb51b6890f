"""Summary metrics of repeated estimates of one kernel value (docs/architecture.md#result-schema
metric names)."""

from __future__ import annotations

import numpy as np

from rfbench.compute.stats import mean_se, standard_error

Metric = tuple[float, float | None]  # (value, standard error or None)
#: a closed-form relative RMSE below this is an exact estimate (its sample error is round-off)
EXACT_RELATIVE = 1e-12


def pointwise_metrics(
    estimates: np.ndarray,
    true: float,
    closed_mse: float | None = None,
    closed_fourth: float | None = None,
) -> dict[str, Metric]:
    """true, mean, bias, mse, rel_rmse, rel_mae, q05/q50/q95, neg_fraction of N estimates.

    Standard errors come from the closed forms where given (an unbiased estimator's MSE
    ``closed_mse`` and 4th central moment ``closed_fourth``,
    ``rfbench.compute.features.theory.moments``): √(MSE/N) for the mean and bias, √((E(K̂-K)⁴ -
    MSE²)/N) for the MSE. Otherwise from the sample: σ/√N for means, std of the squared errors /√N
    for the MSE. The relative RMSE gets the delta method se(MSE)/(2√MSE)/K (√MSE closed-form where
    given). Heavy-tailed samples understate the sample-based errors: see the ``resolved`` flag
    (``rfbench.compute.features.theory.resolution``).
    """
    k = np.asarray(estimates, dtype=float)
    n = k.size
    err = k - true
    sq = err**2
    mse = float(sq.mean())
    se_mse, se_mean = standard_error(sq), standard_error(k)
    if closed_mse is not None and np.isfinite(closed_mse):
        se_mean = float(np.sqrt(closed_mse / n))
        if closed_fourth is not None:
            se_mse = float(np.sqrt(max(closed_fourth - closed_mse**2, 0.0) / n))
    rel_rmse = np.sqrt(mse) / true
    scale = closed_mse if closed_mse is not None and closed_mse > 0 else mse
    se_rel_rmse = se_mse / (2 * np.sqrt(scale) * true) if se_mse is not None and scale > 0 else None
    if closed_mse is not None and closed_mse <= (EXACT_RELATIVE * true) ** 2:
        se_mean = se_mse = se_rel_rmse = 0.0  # exact here (trig at θ = 0): the error is round-off
    abs_rel = np.abs(err) / true
    q05, q50, q95 = np.quantile(k, [0.05, 0.5, 0.95])
    neg = float(np.mean(k < 0))
    return {
        "true": (float(true), None),
        "mean": (float(k.mean()), se_mean),
        "bias": (float(err.mean()), se_mean),
        "mse": (mse, se_mse),
        "rel_rmse": (float(rel_rmse), se_rel_rmse),
        "rel_mae": mean_se(abs_rel),
        "q05": (float(q05), None),
        "q50": (float(q50), None),
        "q95": (float(q95), None),
        "neg_fraction": (neg, float(np.sqrt(neg * (1 - neg) / n))),
    }


#: The moment of K̂ each empirical statistic rests on (1: mean-type, 2: MSE-type); a statistic
#: absent here (quantiles, fractions, exact values) is resolved by boundedness.
MOMENT_ORDER: dict[str, int] = {"mean": 1, "bias": 1, "rel_mae": 1, "mse": 2, "rel_rmse": 2}
