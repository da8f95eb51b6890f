"""Closed-form MSEs registered by estimator name; :func:`mse` converts the softmax MSE to the
estimator's kernel, MSE_α = e^{2α(‖x‖²+‖y‖²)} MSE_SM (HRF Sec. 2; docs/methods.md#notation)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rfbench.compute.features.base import Estimator
from rfbench.compute.kernels import sq_norms
from rfbench.compute.plugins import BuiltinsThenPlugins, claim, tracked

TheoryFn = Callable[..., np.ndarray]
PACKAGE = "rfbench.compute.features.theory"
FORMULAS: dict[str, TheoryFn] = tracked({})


def register_theory(*names: str) -> Callable[[TheoryFn], TheoryFn]:
    """Register a softmax-MSE formula for the given estimator names.

    The formula of a data-dependent estimator (``estimator.data_dependent``) is called as
    fn(estimator, x, y, params) with the fitted parameters of a draw (``draw.params``); the others
    as fn(estimator, x, y).
    """

    def deco(fn: TheoryFn) -> TheoryFn:
        for name in names:
            claim(FORMULAS, "closed form", name, fn, fn)
        return fn

    return deco


def load_builtins() -> None:
    """Import every formula module of this package (registration happens on import)."""
    from rfbench.compute.plugins import import_submodules

    import_submodules(PACKAGE, skip=("registry",))


#: the built-ins, then the plugins, on first use (rfbench.compute.plugins)
_load = BuiltinsThenPlugins(load_builtins)


def has_theory(name: str) -> bool:
    """Whether a closed-form MSE exists for the estimator called ``name``."""
    _load()
    return name in FORMULAS


def mse(
    estimator: Estimator, x: np.ndarray, y: np.ndarray, params: dict | None = None
) -> np.ndarray:
    """Closed-form MSE of ``estimator`` at (x, y) in its own kernel; x, y of shape (..., d).

    Data-dependent estimators (GERF/DERF) need ``params`` = ``draw.params`` of a fitted draw.
    """
    _load()
    fn = FORMULAS.get(estimator.name)
    if fn is None:
        raise NotImplementedError(f"no closed-form MSE for {estimator.name}")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if estimator.data_dependent:
        if params is None:
            raise ValueError(
                f"{estimator.name} is data-dependent: pass params=draw.params of a fitted draw"
            )
        out = np.asarray(fn(estimator, x, y, params), dtype=float)
    else:
        out = np.asarray(fn(estimator, x, y), dtype=float)
    if estimator.kernel == "angular" or estimator.alpha == 0.0:
        return out
    return out * np.exp(2.0 * estimator.alpha * (sq_norms(x) + sq_norms(y)))
