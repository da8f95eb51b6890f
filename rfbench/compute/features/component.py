"""A feature function pair (f1, f2) of the softmax kernel, applied to projections (DERF Def. 2.1;
docs/extending.md#a-component-feature-function)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from rfbench.compute.features.maps import Features, Parts, Side, shifted_exp
from rfbench.compute.features.projections import Projections, check_inputs
from rfbench.compute.kernels import KERNELS


class Component(ABC):
    """A feature function pair (f1, f2) for the softmax kernel K^(0) (DERF Def. 2.1).

    ``log_terms`` gives per-projection features (before the quadrature weights) in log space.
    """

    name: str = ""
    description: str = ""
    paper: str = ""
    outputs: int = 1  # l: features per projection
    #: complex features: each takes two real entries (the feature count counts it twice)
    complex_valued: bool = False
    positive: bool = True
    unbiased: bool = True
    data_dependent: bool = False
    rotation_invariant: bool = True  # uses ω only through ωᵀx and ‖ω‖²
    symmetric: bool = True  # f1 == f2
    #: draws a phase b_i ~ U[0, 2π] with each ω_i (``Projections.phase``: random-phase TrigRF)
    random_phase: bool = False
    #: kernels it estimates: the K^(α) family, or "angular" (1 - 2θ/π) for sign features
    kernels: tuple[str, ...] = KERNELS
    #: signs s of the tilts s·(x + y) of ω's law an importance sampler of the MSE uses (positive
    #: (2,), hyperbolic (±2), bounded trig ()); None: no importance sampler (no is_* metrics)
    importance_tilts: tuple[float, ...] | None = None

    def __init__(self, **options: Any) -> None:
        if options:
            raise TypeError(f"component {self.name!r} takes no options, got {sorted(options)}")

    def fit(self, X: np.ndarray | None, Y: np.ndarray | None, d: int) -> dict[str, Any]:
        """Parameters fitted from data statistics (data-dependent components only)."""
        return {}

    def pair_log_estimate(
        self, proj: Projections, X: np.ndarray, Y: np.ndarray, params: dict[str, Any]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Optional shortcut for few pairs: (values, row_log, col_log), K^(0) estimates
        values·exp(row_log[i] + col_log[j]) of shape (draws, N, N'), when cheaper than the two
        feature maps; None: use the feature maps."""
        return None

    def fit_flops(self, n: float, d: int) -> float | None:
        """FLOPs of ``fit`` on n points per side in R^d (rfbench.compute.experiments.cost.model):
        0 for a data-free component, None for a data-dependent one without a model."""
        return None if self.data_dependent else 0.0

    def feature_overhead_flops(self, d: int) -> float:
        """FLOPs per point of the map beyond ωᵀx and one exp or sin/cos and scale per feature
        (e.g. the dense DERF maps' B x and xᵀCx, DERF Thm 4.1)."""
        return 0.0

    def dtype_parts(
        self,
        proj: Projections,
        X: np.ndarray,
        side: Side,
        params: dict[str, Any],
        dt: Any,
        memo: dict,
    ) -> Parts:
        """The map f(ω_i, x)/√M computed in the dtype ``dt`` at every step, as ``factor ·
        exp(exponent)`` (optional capability; :mod:`rfbench.compute.features.maps`).

        Parameters
        ----------
        proj : Projections
            Monte Carlo projections of one draw.
        X : ndarray of shape (N, d)
            Inputs, already cast to ``dt``.
        side : {"query", "key"}
            f1 or f2.
        params : dict
            Fitted parameters (data-dependent components).
        dt : numpy scalar type
            np.float64, np.float32, np.float16 or ml_dtypes.bfloat16.
        memo : dict
            One dict per draw and dtype: the query and key sides share rounded ω through it.

        Returns
        -------
        Parts
            exponent and factor of shape (draws, N, M·l) in ``dt``.
        """
        raise NotImplementedError(
            f"component {self.name!r} declares no reduced-precision form (Component.dtype_parts)"
        )

    @abstractmethod
    def log_terms(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]
    ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray]:
        """(log_magnitude (draws, N, M, l), factor or None, row_log (draws or 1, N)).

        The feature f(ω_i, x)_l = factor · exp(log_magnitude + row_log); ``factor`` holds signs or
        phases with |factor| ≤ 1 (None for positive features). A bounded feature (trig, sign)
        returns log_magnitude None: the factor is the feature, up to exp(row_log).
        """

    def features(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]
    ) -> Features:
        """Weighted features: √|a_i| f1(ω_i, x) (query), sign(a_i)√|a_i| f2(ω_i, y) (key)."""
        X = check_inputs(X, proj.frame)
        log_mag, factor, row_log = self.log_terms(proj, X, side, params)
        a = proj.quadrature_weights()[:, None, :, None]
        signed = side == "key" and np.any(a < 0)
        if proj.weights is None:  # Monte Carlo 1/M: a constant, carried by the row scale
            row_log = row_log - 0.5 * np.log(proj.count)
        if log_mag is None:  # bounded features: no exponentials, no shift needed
            if proj.weights is not None:
                factor = factor * (np.sqrt(np.abs(a)) * (np.sign(a) if signed else 1.0))
            values = factor.reshape(factor.shape[0], factor.shape[1], -1)
            return Features(values, np.broadcast_to(row_log, values.shape[:2]).astype(float))
        if proj.weights is not None:
            with np.errstate(divide="ignore"):
                log_mag = log_mag + 0.5 * np.log(np.abs(a))
        if signed:
            factor = np.sign(a) if factor is None else factor * np.sign(a)
        out = shifted_exp(log_mag, factor)
        row_log = np.broadcast_to(row_log, out.log_scale.shape)
        return Features(out.values, out.log_scale + row_log)
