"""The dtype steps of reduced-precision feature maps ``factor · exp(exponent)`` (:class:`Parts`;
the capability ``Estimator.dtype_parts``, docs/extending.md#capabilities; HRF Eq. 2–3,
DERF Thm 4.1).

Every step returns the dtype; 16-bit sums go through :func:`mm` (float32 accumulation, one
rounding), because ``np.sum`` of bfloat16 accumulates in bfloat16."""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute.features.maps import Parts
from rfbench.compute.features.projections import Projections

#: ``Parts`` (defined in :mod:`rfbench.compute.features.maps`) stays importable here for plugins
__all__ = ["Parts", "half_sq", "mm", "project", "rounded"]


def mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b in the dtype: float32 accumulation and one rounding for the 16-bit types, as numpy's
    own half loops do, but through the float32 BLAS (the order of the float32 sums differs).

    Parameters
    ----------
    a, b : ndarray
        Operands of one floating dtype (batched as ``np.matmul``).

    Returns
    -------
    ndarray
        The product in the operands' dtype.
    """
    dt = np.result_type(a, b)
    if dt.itemsize >= 4:
        return np.matmul(a, b)
    return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(dt)


def half_sq(X: np.ndarray) -> np.ndarray:
    """½‖x‖² per row in X's dtype, the sum as a matmul (float32 accumulation; HRF Eq. 2–3's
    row term).

    Parameters
    ----------
    X : ndarray of shape (..., N, d)
        Inputs in the dtype.

    Returns
    -------
    ndarray of shape (..., N)
    """
    ones = np.ones((X.shape[-1], 1), X.dtype)
    return mm(X * X, ones)[..., 0] * X.dtype.type(0.5)


def rounded(proj: Projections, dt: Any, memo: dict) -> np.ndarray:
    """ω rounded to the dtype (held as float32 for the 16-bit types, ready for :func:`mm`); the
    query and key sides of one draw share it through ``memo``.

    Parameters
    ----------
    proj : Projections
        Monte Carlo projections (no quadrature weights).
    dt : numpy scalar type
        The dtype (np.float64, np.float32, np.float16 or ml_dtypes.bfloat16).
    memo : dict
        One dict per draw and dtype.

    Returns
    -------
    ndarray of shape (draws, M, k)
    """
    key = (id(proj), "W")
    if key not in memo:
        if proj.weights is not None:
            raise ValueError("dtype maps support Monte Carlo couplings (no quadrature weights)")
        W = proj.W.astype(dt)
        memo[key] = W if W.dtype.itemsize >= 4 else W.astype(np.float32)
    return memo[key]


def project(proj: Projections, X: np.ndarray, dt: Any, memo: dict) -> np.ndarray:
    """ωᵀx in the dtype: (draws, N, M).

    Parameters
    ----------
    proj : Projections
        Monte Carlo projections, rounded once per draw through ``memo`` (:func:`rounded`).
    X : ndarray of shape (N, d) or (draws, N, d)
        Inputs in the dtype.
    dt : numpy scalar type
        The dtype.
    memo : dict
        One dict per draw and dtype.

    Returns
    -------
    ndarray of shape (draws, N, M)
    """
    W = rounded(proj, dt, memo)
    Xt = np.swapaxes(X[..., : proj.frame], -1, -2).astype(W.dtype)
    return np.swapaxes(np.matmul(W, Xt), -1, -2).astype(dt)
