"""The FLOP model of ``rfbench cost``: drawing, feature maps, Gram products and attention.

One multiply-add counts 2 FLOPs; one exp, sin, cos, square root or Gaussian/uniform sample counts
1. P projections in R^d per projection set of the draw, F real feature entries per point (a complex
entry counts 2), N points per side:

- draw: each coupling's ``WeightsSampler.draw_flops``, plus the estimator's ``fit_flops`` (an
  estimator without either gets a skipped row);
- features, per point and side: 2Pd (for the Hadamard couplings the cheaper of that and
  :func:`structured_projection_flops`) + 2F, plus the estimator's ``feature_overhead_flops``;
- Gram: 2·N_q·N_k·F;
- exact softmax attention of L queries and keys, values of width d_v: L²(2d + 2d_v + 2);
- random-feature attention: draw + 2L·(features per point) + L·F·(4d_v + 4). It beats exact
  attention for L > L*, the positive root of (2d + 2d_v + 2)L² = (2·feat + F(4d_v + 4) + fit)L +
  draw (a fit on the L queries and keys costs fit·L).
"""

from __future__ import annotations

import math

import numpy as np

from rfbench.compute.features.base import Draw, Estimator, WeightsSampler


class NoCostModel(ValueError):
    """An estimator part that does not say what its draw costs (no ``draw_flops``)."""


def _sampler(est: Estimator) -> WeightsSampler:
    """The coupling of an estimator's projection sets (a hybrid's ω and τ share one)."""
    weights = getattr(est, "weights", None)
    if weights is None:
        raise NoCostModel(f"{est.name}: no coupling to ask for its draw cost")
    return weights


def projections(draw: Draw) -> list[int]:
    """The number of projections of each projection set of a draw (e.g. ω and τ of a hybrid)."""
    return [p.count for p in draw.projections.values()]


def draw_flops(est: Estimator, counts: list[float], d: int, n_fit: float) -> float:
    """FLOPs of one draw of ``est`` with ``counts`` projections per set in R^d, with a fit on
    n_fit points per side if it needs one."""
    sampler, total = _sampler(est), 0.0
    for p in counts:
        flops = sampler.draw_flops(p, d)
        if flops is None:
            raise NoCostModel(
                f"coupling {sampler.name!r} has no draw cost (WeightsSampler.draw_flops)"
            )
        total += flops
    fit = est.fit_flops(n_fit, d)  # the estimator's own fit model (0 without a fit)
    if fit is None:
        raise NoCostModel(f"{est.name}: no cost model of its data fit (Estimator.fit_flops)")
    total += fit
    return float(total)


def feature_flops(est: Estimator, counts: list[float], d: int, width: float) -> float:
    """FLOPs of the feature map of one point (one side)."""
    flops = 2 * sum(counts) * d + 2 * width
    if hasattr(_sampler(est), "chain"):  # a Hadamard chain (structured)
        flops = min(flops, sum(structured_projection_flops(p, d) for p in counts) + 2 * width)
    flops += est.feature_overhead_flops(d)  # e.g. the dense DERF maps' B x and xᵀCx
    return float(flops)


def structured_projection_flops(p: float, d: int) -> float:
    """FLOPs of ωᵀx for P Hadamard-chain projections of one point in R^d: ⌈P/d′⌉ blocks of three
    transforms of length d′ and four diagonal passes."""
    dp = 1 << (d - 1).bit_length()
    return math.ceil(p / dp) * (3 * dp * math.log2(max(dp, 2)) + 4 * dp)


def crossover_length(
    d: int, d_v: int, draw: float, per_point: float, width: float, fit_rate: float = 0.0
) -> float:
    """L* where random-feature attention and exact attention cost the same FLOPs (``draw``
    without its fit; a fit on the L queries and keys costs ``fit_rate``·L)."""
    a = 2 * d + 2 * d_v + 2
    b = 2 * per_point + width * (4 * d_v + 4) + fit_rate
    return float((b + np.sqrt(b * b + 4 * a * draw)) / (2 * a))
