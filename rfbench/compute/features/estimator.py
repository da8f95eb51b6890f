"""``component@weights``: a feature function applied to a coupling of projections
(docs/architecture.md#estimator-contract)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from rfbench.compute.checks import positive_int
from rfbench.compute.features.base import (
    Block,
    Component,
    Draw,
    Estimator,
    Features,
    Fit,
    Parts,
    Projections,
    Rng,
    Side,
    WeightsSampler,
    check_inputs,
    declares,
    kernel_row_log,
    scaled_estimate,
    whole_maps,
)


class ComponentEstimator(Estimator):
    """K̂(x, y) = Σ_i a_i f1(ω_i, x) f2(ω_i, y) · exp(α‖x‖² + α‖y‖²), ω from a coupling."""

    kind = "component"
    weights: WeightsSampler

    def __init__(
        self, component: Component, weights: WeightsSampler, kernel: str = "softmax", m: int = 128
    ) -> None:
        self.component, self.weights = component, weights
        if kernel not in component.kernels:
            allowed = ", ".join(component.kernels)
            raise ValueError(f"{component.name} estimates kernel(s) {allowed}, not {kernel!r}")
        self.kernel, self.m = kernel, positive_int("m (number of projections)", m)
        self.name = f"{component.name}@{weights.name}"

    def __repr__(self) -> str:
        return f"ComponentEstimator({self.name!r}, kernel={self.kernel!r}, m={self.m})"

    @property
    def alpha(self) -> float:
        return 0.0 if self.kernel == "angular" else super().alpha

    @property
    def unbiased(self) -> bool:
        weights = self.weights
        return self.component.unbiased and (
            weights.marginally_gaussian or weights.importance_weighted
        )

    @property
    def rotation_invariant(self) -> bool:
        return self.component.rotation_invariant and self.weights.rotation_invariant

    @property
    def data_dependent(self) -> bool:  # type: ignore[override]
        """The component is fitted (GERF/DERF) or the coupling is (``@fitted``)."""
        return self.component.data_dependent or self.weights.data_dependent

    def sample(
        self, rng: Rng, d: int, draws: int = 1, fit: Fit | None = None, frame: int | None = None
    ) -> Draw:
        if frame is not None and frame < d and not self.component.rotation_invariant:
            raise ValueError(f"component {self.component.name!r} needs full projections, no frame")
        params = self._fit(fit, d)
        weights = self.weights
        if weights.data_dependent:  # a coupling fitted to the data (``@fitted``)
            weights = weights.fitted(*self._fit_data(fit))
            params = {**params, **weights.fit_params()}
        proj = weights.sample(rng, d, self.m, draws, frame=frame)
        if self.component.random_phase:  # b ~ U[0, 2π] per ω (DERF Eqs. 4-5)
            phase = rng.uniform(0.0, 2.0 * np.pi, size=(proj.draws, proj.count))
            proj = replace(proj, phase=phase)
        return Draw({"omega": proj}, params, d)

    def _fit_data(self, fit: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, ...]:
        if fit is None:
            raise ValueError(f"{self.name} is data-dependent: pass fit=(X, Y) to sample()")
        X, Y = (check_inputs(a) for a in fit)
        return X.reshape(-1, X.shape[-1]), Y.reshape(-1, Y.shape[-1])

    def _fit(self, fit: tuple[np.ndarray, np.ndarray] | None, d: int) -> dict[str, Any]:
        if not self.component.data_dependent:
            return {}
        return self.component.fit(*self._fit_data(fit), d)

    def estimate(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """The component's pair shortcut where it has one, else the bilinear product."""
        proj = draw.projections["omega"]
        X, Y = check_inputs(X, proj.frame), check_inputs(Y, proj.frame)
        pair = self.component.pair_log_estimate(proj, X, Y, draw.params)
        if pair is None:
            return super().estimate(draw, X, Y)
        values, row_log, col_log = pair
        if self.alpha != 0.0:
            row_log = row_log + kernel_row_log(self.alpha, X)
            col_log = col_log + kernel_row_log(self.alpha, Y)
        return scaled_estimate(values, row_log, col_log, fresh=True)

    def estimate_blocks(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> list[Block] | None:
        """The two maps, one block, unless the component's pair shortcut forms the estimate."""
        proj = draw.projections["omega"]
        X, Y = check_inputs(X, proj.frame), check_inputs(Y, proj.frame)
        if self.component.pair_log_estimate(proj, X, Y, draw.params) is not None:
            return None
        return whole_maps(self, draw, X, Y)

    def log_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        out = self.component.features(draw.projections["omega"], X, side, draw.params)
        return self.with_kernel(out, X)

    # Capabilities (docs/extending.md#capabilities), answered by the component.

    @property
    def features_per_projection(self) -> int:  # type: ignore[override]
        """l, the real features per projection ω_i (the component's ``outputs``, a complex one
        counted twice as :meth:`feature_width` counts it)."""
        return self.component.outputs * (2 if self.component.complex_valued else 1)

    @property
    def projection_terms(self) -> bool:
        """Every component has per-projection log terms (its ``log_terms``)."""
        return True

    @property
    def precision_form(self) -> bool:
        """Whether the component declares its reduced-precision form."""
        return declares(type(self.component), "dtype_parts", Component)

    def projection_log_terms(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]
    ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray]:
        """The component's ``log_terms`` (DERF Def. 2.1; see :meth:`Component.log_terms`)."""
        return self.component.log_terms(proj, X, side, params)

    def dtype_parts(self, draw: Draw, X: np.ndarray, side: Side, dt: Any, memo: dict) -> Parts:
        """The component's reduced-precision form on the draw's ω (softmax kernel only)."""
        if self.alpha != 0.0:
            raise ValueError(f"{self.name}: the reduced-precision form is of the softmax kernel")
        return self.component.dtype_parts(draw.projections["omega"], X, side, draw.params, dt, memo)

    @property
    def importance_tilts(self) -> tuple[float, ...] | None:
        """The component's tilts, for independent rows only (iid)."""
        return self.component.importance_tilts if self.weights.independent_rows else None

    @property
    def pairing_weights(self) -> WeightsSampler | None:
        """The coupling, unless a fit or phases are part of the draw."""
        return None if self.data_dependent or self.component.random_phase else self.weights

    def draw_from(self, proj: Projections) -> Draw:
        """``Draw({"omega": proj})`` without fitted parameters."""
        return Draw({"omega": proj}, {}, proj.d)

    def fit_flops(self, n: float, d: int) -> float | None:
        """The component's fit cost (see :meth:`Component.fit_flops`)."""
        return self.component.fit_flops(n, d)

    def feature_overhead_flops(self, d: int) -> float:
        """The component's per-point overhead (see :meth:`Component.feature_overhead_flops`)."""
        return self.component.feature_overhead_flops(d)
