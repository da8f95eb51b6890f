"""Summary metrics of repeated estimates of one kernel value (DESIGN §5 metric names)."""

from __future__ import annotations

import numpy as np

Metric = tuple[float, float | None]  # (value, standard error or None)


def pointwise_metrics(estimates: np.ndarray, true: float) -> dict[str, Metric]:
    """true, mean, bias, mse, rel_rmse, rel_mae, q05/q50/q95, neg_fraction of N estimates.

    Standard errors: σ/√N for means; std of the squared errors /√N for the MSE; the delta method
    se(MSE)/(2√MSE)/K for the relative RMSE.
    """
    k = np.asarray(estimates, dtype=float)
    n = k.size
    err = k - true
    sq = err**2
    mse = float(sq.mean())
    se_mse = float(sq.std(ddof=1) / np.sqrt(n)) if n > 1 else None
    se_mean = float(k.std(ddof=1) / np.sqrt(n)) if n > 1 else None
    rel_rmse = np.sqrt(mse) / true
    se_rel_rmse = se_mse / (2 * np.sqrt(mse) * true) if se_mse is not None and mse > 0 else None
    abs_rel = np.abs(err) / true
    q05, q50, q95 = np.quantile(k, [0.05, 0.5, 0.95])
    neg = float(np.mean(k < 0))
    return {
        "true": (float(true), None),
        "mean": (float(k.mean()), se_mean),
        "bias": (float(err.mean()), se_mean),
        "mse": (mse, se_mse),
        "rel_rmse": (float(rel_rmse), se_rel_rmse),
        "rel_mae": (
            float(abs_rel.mean()),
            float(abs_rel.std(ddof=1) / np.sqrt(n)) if n > 1 else None,
        ),
        "q05": (float(q05), None),
        "q50": (float(q50), None),
        "q95": (float(q95), None),
        "neg_fraction": (neg, float(np.sqrt(neg * (1 - neg) / n))),
    }
