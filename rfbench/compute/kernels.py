"""Exact kernels, all members of the scaled softmax family K^(α) (DERF paper, Sec. 2).

K^(α)(x, y) = exp(α‖x‖² + xᵀy + α‖y‖²): softmax is α = 0, Gaussian exp(-‖x-y‖²/2) is α = -1/2.
Every function accepts X of shape (..., N, d) and Y of shape (..., N', d) and returns (..., N, N').
"""

from __future__ import annotations

import numpy as np

KERNEL_ALPHA: dict[str, float] = {"softmax": 0.0, "gaussian": -0.5}
#: The kernels every estimator of the K^(α) family can be asked for.
KERNELS: tuple[str, ...] = tuple(KERNEL_ALPHA)


def check_kernel(family: str, kernel: str) -> str:
    """``kernel`` if it is one of :data:`KERNELS`, else a ValueError naming the estimator family."""
    if kernel not in KERNELS:
        raise ValueError(f"{family} estimates kernels {', '.join(KERNELS)}, not {kernel!r}")
    return kernel


def kernel_alpha(kernel: str | float) -> float:
    """The α of K^(α) for a kernel name (or an α given directly)."""
    if isinstance(kernel, int | float):
        return float(kernel)
    try:
        return KERNEL_ALPHA[kernel]
    except KeyError:
        allowed = ", ".join(KERNEL_ALPHA)
        raise ValueError(f"unknown kernel {kernel!r}; allowed: {allowed}") from None


def sq_norms(X: np.ndarray) -> np.ndarray:
    """Row-wise squared Euclidean norms, shape (..., N)."""
    return np.einsum("...i,...i->...", X, X)


def log_scaled_softmax(X: np.ndarray, Y: np.ndarray, alpha: float) -> np.ndarray:
    """log K^(α)(x, y) = α‖x‖² + xᵀy + α‖y‖² for every pair."""
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    out = X @ np.swapaxes(Y, -1, -2)
    if alpha != 0.0:
        out = out + alpha * sq_norms(X)[..., :, None] + alpha * sq_norms(Y)[..., None, :]
    return out


def log_kernel(kernel: str | float, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """log K(x, y) for a named kernel ("softmax", "gaussian") or an α."""
    return log_scaled_softmax(X, Y, kernel_alpha(kernel))


def kernel_matrix(kernel: str | float, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """K(x, y) for every pair of rows of X and Y."""
    return np.exp(log_kernel(kernel, X, Y))


def log_softmax_kernel(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """log SM(x, y) = xᵀy."""
    return log_scaled_softmax(X, Y, 0.0)


def softmax_kernel(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """SM(x, y) = exp(xᵀy) (HRF Eq. 1)."""
    return np.exp(log_softmax_kernel(X, Y))


def gaussian_kernel(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """exp(-‖x - y‖²/2)."""
    return np.exp(log_scaled_softmax(X, Y, -0.5))
