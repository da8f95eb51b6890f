"""Monte Carlo check of the closed-form DERF-family variances (docs/methods.md#derf-family): the
mean of log(MSE/K²) of ``samples`` one-feature estimates (``*@iid``, m = 1) on a subsample of pairs.

The paper's random-phase TrigRF (DERF Eqs. 4-5; the registry's ``trig-phase``) is drawn here
directly, on the random stream this check has always used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute.experiments.chunks import chunks
from rfbench.compute.features import registry
from rfbench.compute.features.derf import MECHANISMS as FITTED
from rfbench.compute.features.theory import resolution
from rfbench.compute.features.theory.derf import log_relative_variance

#: the ``estimator`` column of mechanisms whose name is not ``<mechanism>@iid``
ESTIMATOR = {"trig": "trig-phase@iid", "trig-sincos": "trig@iid"}


def estimator_name(mechanism: str) -> str:
    """The ``estimator`` column of a mechanism (``trig`` = the random-phase map, ``trig-phase``)."""
    return ESTIMATOR.get(mechanism, f"{mechanism}@iid")


def _trig_phase_estimates(rng: np.random.Generator, xs, ys, n: int) -> np.ndarray:
    """n random-phase TrigRF estimates 2e^{(‖x‖²+‖y‖²)/2} cos(ωᵀx+θ) cos(ωᵀy+θ) (DERF Eqs. 4-5;
    docs/methods.md#trig)."""
    W = rng.standard_normal((n, xs.shape[1]))
    theta = rng.uniform(0.0, 2.0 * np.pi, size=(n, 1))
    cx, cy = np.cos(W @ xs.T + theta), np.cos(W @ ys.T + theta)
    scale = 2.0 * np.exp(0.5 * (xs**2).sum(1)[:, None] + 0.5 * (ys**2).sum(1)[None, :])
    return scale * cx[:, :, None] * cy[:, None, :]


def mc_check(
    rng: np.random.Generator,
    mechanism: str,
    params: dict[str, Any] | None,
    X: np.ndarray,
    Y: np.ndarray,
    pairs: int,
    samples: int,
) -> tuple[float, float, float]:
    """(MC mean log(MSE/K²), its stderr, the closed form on the same pairs) over pairs × pairs."""
    xs = X[rng.choice(len(X), size=pairs, replace=False)]
    ys = Y[rng.choice(len(Y), size=pairs, replace=False)]
    K = np.exp(xs @ ys.T)
    est = None if mechanism == "trig" else registry.get(estimator_name(mechanism), m=1)
    fit = (X, Y) if mechanism in FITTED else None
    s1 = np.zeros((pairs, pairs))
    s2 = np.zeros((pairs, pairs))
    for start, stop in chunks(samples, 8 * pairs**2, share=0.0):
        n = stop - start
        if est is None:
            k_hat = _trig_phase_estimates(rng, xs, ys, n)
        else:
            k_hat = est.estimate(est.sample(rng, X.shape[1], draws=n, fit=fit), xs, ys)
        sq = (k_hat - K) ** 2
        s1 += sq.sum(0)
        s2 += (sq**2).sum(0)
    mse = s1 / samples
    se = np.sqrt(np.maximum(s2 / samples - mse**2, 0.0) / (samples - 1))
    mc = float(np.mean(np.log(mse / K**2)))
    theory = log_relative_variance(mechanism, params, xs, ys, m=1, power=2, reduce="mean")
    return mc, float(np.mean(se / mse)), theory


def mc_resolved(
    mechanism: str, params: dict[str, Any] | None, X: np.ndarray, Y: np.ndarray, samples: int
) -> bool | None:
    """Whether ``samples`` one-feature estimates resolve the MSE at every pair of X × Y (a
    superset of the check's subsample; rfbench.compute.features.theory.resolution). TrigRF:
    bounded."""
    if mechanism == "trig":
        return True
    est = registry.get(estimator_name(mechanism), m=1)
    return resolution.pairs_resolved(est, X, Y, samples, 2, params)
