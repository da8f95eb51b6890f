"""Closed-form MSE of ``positive@fitted``: (E_q[(p/q)² f(ω, x)² f(ω, y)²] − K²)/M
(docs/methods.md#fitted-coupling)."""

from __future__ import annotations

import numpy as np

from rfbench.compute.features.base import Estimator
from rfbench.compute.features.theory import register_theory
from rfbench.compute.features.weights.fitted import positive_second_moment


@register_theory("positive@fitted", data_dependent=True)
def _positive_fitted(est: Estimator, x: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
    second = np.exp(positive_second_moment(x, y, params["proposal_cov"]))
    return (second - np.exp(2.0 * np.einsum("...i,...i->...", x, y))) / est.m
