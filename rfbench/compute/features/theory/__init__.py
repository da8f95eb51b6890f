"""Closed-form MSE of the estimators (docs/architecture.md#layout), dispatched by estimator name.

Formula functions are registered per name (``component@weights`` or a hybrid name), take the
estimator and arrays x, y of shape (..., d), and return the MSE of the **softmax** estimate with
shape (...). ``mse`` converts to the estimator's kernel: K^(α) = e^{α‖x‖²} SM e^{α‖y‖²}, so
MSE_α = e^{2α(‖x‖²+‖y‖²)} MSE_SM (HRF Sec. 2; docs/methods.md#notation; DERF Sec. 2).

The formulas live in one module per family (``basic``, ``hybrid``, ``derf``, …) and register
themselves with :func:`~rfbench.compute.features.theory.registry.register_theory`; the names below
are the library's API (``theory.mse(est, x, y)``), re-exported from :mod:`.registry` and
:mod:`.pairs`.
"""

from rfbench.compute.features.theory.pairs import equal_norm_pair
from rfbench.compute.features.theory.registry import FORMULAS, has_theory, mse, register_theory

__all__ = ["FORMULAS", "equal_norm_pair", "has_theory", "mse", "register_theory"]
