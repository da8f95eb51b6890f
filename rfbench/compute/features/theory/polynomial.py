"""Closed-form MSE of the polynomial maps of exp(xᵀy): ``taylor2`` (deterministic: MSE = bias²) and
``maclaurin`` (E[g²] = 0F1(; 1; q/r)/(1 − r); Kar & Karnick 2012) (docs/methods.md#taylor2,
#maclaurin [derived]; checked by Monte Carlo in tests/features/test_polynomial.py)."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, hyp0f1

from rfbench.compute.features.base import Estimator
from rfbench.compute.features.theory.registry import register_theory
from rfbench.compute.kernels import sq_norms

_SERIES = 0.5  # below |t|: the series Σ_{k≥3} t^k/k! (no cancellation)


def taylor2_residual(t: np.ndarray) -> np.ndarray:
    """e^t − 1 − t − t²/2 without cancellation.

    Parameters
    ----------
    t : ndarray, any shape
        Dot products xᵀy.

    Returns
    -------
    ndarray, the shape of ``t``
        The bias of ``taylor2`` for the softmax kernel.
    """
    t = np.asarray(t, dtype=float)
    k = np.arange(3, 30)
    small = np.abs(t) < _SERIES
    ts = np.where(small, t, 0.0)
    series = np.sum(ts[..., None] ** k * np.exp(-gammaln(k + 1)), axis=-1)
    with np.errstate(over="ignore"):
        direct = np.expm1(t) - t - t**2 / 2
    return np.where(small, series, direct)


@register_theory("taylor2")
def taylor2_mse(est: Estimator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Softmax-kernel MSE of ``taylor2`` = its squared bias; x, y of shape (..., d) → (...)."""
    return taylor2_residual(np.einsum("...i,...i->...", x, y)) ** 2


def maclaurin_second_moment(x: np.ndarray, y: np.ndarray, ratio: float = 0.5) -> np.ndarray:
    """E[g²] of one random Maclaurin feature product (module doc).

    Parameters
    ----------
    x, y : ndarray, shape (..., d)
        Input pairs.
    ratio : float
        r of the degree law P(N = n) = (1 − r) rⁿ.

    Returns
    -------
    ndarray, shape (...)
        0F1(; 1; q/r)/(1 − r) with q = ‖x‖²‖y‖² + 2(xᵀy)² − 2Σ_i x_i²y_i².
    """
    t = np.einsum("...i,...i->...", x, y)
    q = sq_norms(x) * sq_norms(y) + 2 * t**2 - 2 * np.einsum("...i,...i->...", x**2, y**2)
    return hyp0f1(1.0, q / ratio) / (1.0 - ratio)


@register_theory("maclaurin")
def maclaurin_mse(est: Estimator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Softmax-kernel MSE of ``maclaurin`` with m features; x, y of shape (..., d) → (...)."""
    t = np.einsum("...i,...i->...", x, y)
    return (maclaurin_second_moment(x, y, est.ratio) - np.exp(2 * t)) / est.m
