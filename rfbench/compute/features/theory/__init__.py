"""Closed-form MSE of the estimators, by name: ``theory.mse(est, x, y)``
(docs/methods.md#closed-forms), and the test points they are evaluated at."""

from __future__ import annotations

import numpy as np

from rfbench.compute.features.theory.registry import FORMULAS, has_theory, mse, register_theory

__all__ = ["FORMULAS", "equal_norm_pair", "has_theory", "mse", "register_theory"]


def equal_norm_pair(r: float | np.ndarray, theta: float | np.ndarray, d: int) -> tuple:
    """x, y ∈ R^d with ‖x‖ = ‖y‖ = r at angle θ (in the span of e_1, e_2), broadcast over r, θ."""
    r, theta = np.broadcast_arrays(np.asarray(r, float), np.asarray(theta, float))
    x = np.zeros(r.shape + (d,))
    y = np.zeros(r.shape + (d,))
    x[..., 0] = r
    y[..., 0] = r * np.cos(theta)
    y[..., 1] = r * np.sin(theta)
    return x, y
