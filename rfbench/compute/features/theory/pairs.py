"""Test points for the closed forms: pairs of equal norm at a given angle."""

from __future__ import annotations

import numpy as np


def equal_norm_pair(r: float | np.ndarray, theta: float | np.ndarray, d: int) -> tuple:
    """x, y ∈ R^d with ‖x‖ = ‖y‖ = r at angle θ (in the span of e_1, e_2), broadcast over r, θ."""
    r, theta = np.broadcast_arrays(np.asarray(r, float), np.asarray(theta, float))
    x = np.zeros(r.shape + (d,))
    y = np.zeros(r.shape + (d,))
    x[..., 0] = r
    y[..., 0] = r * np.cos(theta)
    y[..., 1] = r * np.sin(theta)
    return x, y
