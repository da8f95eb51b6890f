"""The dtype steps of reduced-precision feature maps ``factor · exp(exponent)`` (:class:`Parts`;
the capability ``Estimator.dtype_parts``, docs/extending.md#capabilities; HRF Eq. 2–3,
DERF Thm 4.1).

Every step returns the dtype ``dt`` (np.float64, np.float32, np.float16 or ml_dtypes.bfloat16);
16-bit sums go through :func:`mm` (float32 accumulation, one rounding), because ``np.sum`` of
bfloat16 accumulates in bfloat16. ``memo`` is one dict per draw and dtype, through which the query
and key sides share the rounded ω.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute.features.maps import Parts
from rfbench.compute.features.projections import Projections

#: ``Parts`` (defined in :mod:`rfbench.compute.features.maps`) stays importable here for plugins
__all__ = ["Parts", "half_sq", "mm", "project", "rounded"]


def mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b (batched as ``np.matmul``) in the operands' dtype: float32 accumulation and one
    rounding for the 16-bit types, as numpy's own half loops do, but through the float32 BLAS."""
    dt = np.result_type(a, b)
    if dt.itemsize >= 4:
        return np.matmul(a, b)
    return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(dt)


def half_sq(X: np.ndarray) -> np.ndarray:
    """½‖x‖² per row of X (..., N, d) -> (..., N) in X's dtype, the sum as a matmul (HRF Eq. 2–3's
    row term)."""
    ones = np.ones((X.shape[-1], 1), X.dtype)
    return mm(X * X, ones)[..., 0] * X.dtype.type(0.5)


def rounded(proj: Projections, dt: Any, memo: dict) -> np.ndarray:
    """ω of Monte Carlo projections (no quadrature weights) rounded to ``dt``, (draws, M, k), held
    as float32 for the 16-bit types (ready for :func:`mm`), shared through ``memo``."""
    key = (id(proj), "W")
    if key not in memo:
        if proj.weights is not None:
            raise ValueError("dtype maps support Monte Carlo couplings (no quadrature weights)")
        W = proj.W.astype(dt)
        memo[key] = W if W.dtype.itemsize >= 4 else W.astype(np.float32)
    return memo[key]


def project(proj: Projections, X: np.ndarray, dt: Any, memo: dict) -> np.ndarray:
    """ωᵀx in the dtype, (draws, N, M), for inputs X (N, d) or (draws, N, d) in the dtype and ω
    rounded once per draw (:func:`rounded`)."""
    W = rounded(proj, dt, memo)
    Xt = np.swapaxes(X[..., : proj.frame], -1, -2).astype(W.dtype)
    return np.swapaxes(np.matmul(W, Xt), -1, -2).astype(dt)
