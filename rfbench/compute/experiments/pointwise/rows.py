"""Rows of one pointwise curve: the metrics of
:func:`~rfbench.compute.experiments.metrics.pointwise_metrics`, the closed forms and, with
``importance``, :mod:`rfbench.compute.experiments.pointwise.importance`; every row has a
``resolved`` flag (:mod:`rfbench.compute.features.theory.resolution`: k = 1 for means, 2 for MSEs;
True for quantiles, fractions and exact values; null where not assessed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rfbench.compute.experiments.metrics import MOMENT_ORDER, pointwise_metrics
from rfbench.compute.experiments.pointwise import importance
from rfbench.compute.experiments.shared import row
from rfbench.compute.features.base import Draw, Estimator
from rfbench.compute.features.theory import moments, resolution

SAMPLES_NEEDED = "samples_needed"
SAMPLES_NEEDED_MEAN = "samples_needed_mean"
EXACT = ("true", "theory_mse", "theory_rel_rmse", SAMPLES_NEEDED, SAMPLES_NEEDED_MEAN)


def per_group(fn, est: Estimator, x, y, groups: list[np.ndarray], draws: list[Draw], *args):
    """``fn(est, x[g], y[g], *args, params)`` assembled over angle groups (None if any is)."""
    out = np.empty(len(y), dtype=object)
    for g, draw in zip(groups, draws, strict=True):
        part = fn(est, x[g], y[g], *args, params=draw.params)
        if part is None:
            return None
        out[g] = part
    return out


def tail_metrics(estimates: np.ndarray, true: float, tail: float) -> dict[str, tuple]:
    """Draw-level outliers of N estimates (shape (N,)) of a positive kernel value ``true``:
    ``tail_share``, the share k/N of draws with K̂ > ``tail``·K (binomial standard error
    √(p̃(1 − p̃)/N) at p̃ = (k + ½)/(N + 1), so that no draw above is a sampled 0, not an exact
    one), and ``max_ratio``, the largest K̂/K (no standard error: an extreme of N draws, compared
    only at equal N). The CSE paper's Fig. 3 outlier is one drastic estimate, which a
    mean-square statistic averages away (docs/experiments.md#cse).
    """
    ratio = np.asarray(estimates, dtype=float) / true
    above = int(np.sum(ratio > tail))
    smooth = (above + 0.5) / (ratio.size + 1)
    return {
        "tail_share": (above / ratio.size, float(np.sqrt(smooth * (1 - smooth) / ratio.size))),
        "max_ratio": (float(np.max(ratio)), None),
    }


def curve_rows(
    est: Estimator,
    base: Mapping[str, Any],
    x: np.ndarray,
    y: np.ndarray,
    true: np.ndarray,
    thetas: np.ndarray,
    draws: tuple[np.ndarray, list[np.ndarray], list[Draw]],
    mse: np.ndarray | None,
    importance_draws: int,
    rng: np.random.Generator,
    extra: list[Mapping[str, Any]] | None = None,
    tail: float = 0.0,
) -> list[dict[str, Any]]:
    """The rows of one curve; ``draws`` = (estimates (N, A), angle groups, a draw per group);
    ``extra`` adds columns per point (the user's pairs: index and norms); ``tail`` > 0 adds
    :func:`tail_metrics`."""
    extra = extra or [{}] * len(thetas)
    values, groups, last = draws
    samples = len(values)
    closed = mse if mse is not None and est.unbiased else None
    fourth = None
    if closed is not None:
        fourth = per_group(moments.central_fourth, est, x, y, groups, last)
    flags = {k: per_group(resolution.resolved, est, x, y, groups, last, samples, k) for k in (1, 2)}
    needed = {
        metric: per_group(resolution.draws_needed, est, x, y, groups, last, k)
        for metric, k in ((SAMPLES_NEEDED_MEAN, 1), (SAMPLES_NEEDED, 2))
    }
    rows = []
    for i, theta in enumerate(thetas):
        metrics = pointwise_metrics(
            values[:, i],
            true[i],
            None if closed is None else float(closed[i]),
            None if fourth is None else float(fourth[i]),
        )
        if tail > 0:
            metrics.update(tail_metrics(values[:, i], true[i], tail))
        if mse is not None:
            metrics["theory_mse"] = (float(mse[i]), None)
            metrics["theory_rel_rmse"] = (float(np.sqrt(mse[i]) / true[i]), None)
        for metric, counts in needed.items():
            if counts is not None:
                metrics[metric] = (float(counts[i]), None)
        for metric, (value, se) in metrics.items():
            order = MOMENT_ORDER.get(metric)
            ok = True if order is None else flags[order]
            ok = ok if ok is None or ok is True else bool(ok[i])
            n = 0 if metric in EXACT else samples
            rows.append(
                row(metric, value, se, n, **base, **extra[i], theta=float(theta), resolved=ok)
            )
    if importance_draws and importance.supports(est):
        found = importance.importance_mse(est, x, y, true, importance_draws, rng)
        for metric, (value, se, ok) in found.items():
            for i, theta in enumerate(thetas):
                point = {**base, **extra[i], "theta": float(theta), "resolved": bool(ok[i])}
                rows.append(row(metric, value[i], float(se[i]), importance_draws, **point))
    return rows
