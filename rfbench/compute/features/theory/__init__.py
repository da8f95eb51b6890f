"""Closed-form MSE of the estimators, by name: ``theory.mse(est, x, y)``
(docs/methods.md#closed-forms)."""

from rfbench.compute.features.theory.pairs import equal_norm_pair
from rfbench.compute.features.theory.registry import FORMULAS, has_theory, mse, register_theory

__all__ = ["FORMULAS", "equal_norm_pair", "has_theory", "mse", "register_theory"]
