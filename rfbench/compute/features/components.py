"""Data-free feature functions of the softmax kernel: trig, positive, hyperbolic, sign and the
random-phase trig (docs/methods.md#components)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute.features.base import Component, Parts, Projections, Side
from rfbench.compute.features.maps import half_sq, project
from rfbench.compute.features.registry import register_component
from rfbench.compute.kernels import sq_norms


@register_component
class Trig(Component):
    """Trigonometric RFs: e^{‖u‖²/2}[sin ωᵀu, cos ωᵀu] (HRF Eq. 2; Rahimi & Recht)."""

    name = "trig"
    description = "trigonometric features [sin, cos] (random Fourier features)"
    paper = "HRF Eq. 2"
    outputs = 2
    positive = False
    importance_tilts = ()  # bounded: no tilt

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        u = proj.project(X)
        factor = np.empty(u.shape + (2,), dtype=u.dtype)
        np.sin(u, out=factor[..., 0])
        np.cos(u, out=factor[..., 1])
        return None, factor, 0.5 * sq_norms(X)

    def dtype_parts(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any], dt, memo: dict
    ) -> Parts:
        """e^{‖x‖²/2}[sin ωᵀx, cos ωᵀx]/√M in the dtype (HRF Eq. 2): the factor holds sin and cos
        times 1/√M, the exponent ½‖x‖²."""
        u, h = project(proj, X, dt, memo), half_sq(X)[..., None]
        c = dt(1.0 / np.sqrt(proj.count))
        factor = np.concatenate([np.sin(u) * c, np.cos(u) * c], axis=-1)
        return Parts(np.broadcast_to(h, factor.shape).astype(dt), factor, False)

    def pair_log_estimate(
        self, proj: Projections, X: np.ndarray, Y: np.ndarray, params: dict[str, Any]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Σ_i a_i cos(ω_iᵀ(x − y)) (= the [sin, cos] product) with e^{(‖x‖²+‖y‖²)/2}: one
        cosine per pair and projection instead of a sine and a cosine per point, when a side
        has a single point (N·N' ≤ N + N'); exact at x = y."""
        n, n_key = X.shape[-2], Y.shape[-2]
        if n * n_key > n + n_key:
            return None
        diff = X[..., :, None, :] - Y[..., None, :, :]
        u = proj.project(diff.reshape(*diff.shape[:-3], n * n_key, diff.shape[-1]))
        np.cos(u, out=u)
        values = (u @ proj.quadrature_weights()[..., :, None])[..., 0]
        return values.reshape(*values.shape[:-1], n, n_key), 0.5 * sq_norms(X), 0.5 * sq_norms(Y)


@register_component
class Positive(Component):
    """Positive RFs SM⁺: e^{-‖u‖²/2} e^{ωᵀu} (HRF Sec. 2.3 with A = I; docs/methods.md#positive; the
    clustering code's "FAVOR+")."""

    name = "positive"
    description = "positive features exp(ωᵀu - ‖u‖²/2) (SM+, PosRF)"
    paper = "HRF §2.3 (A = I); SimRF Eq. 7; DERF PosRF"
    importance_tilts = (2.0,)

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        return proj.project(X)[..., None], None, -0.5 * sq_norms(X)

    def dtype_parts(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any], dt, memo: dict
    ) -> Parts:
        """exp(ωᵀx − ‖x‖²/2)/√M in the dtype (HRF §2.3, A = I)."""
        u, h = project(proj, X, dt, memo), half_sq(X)[..., None]
        c = dt(1.0 / np.sqrt(proj.count))
        return Parts(u - h, np.full(u.shape, c, dt), True)


@register_component
class Hyperbolic(Component):
    """Antithetic positive RFs SM⁺⁺ (FAVOR+): e^{-‖u‖²/2}[e^{ωᵀu}, e^{-ωᵀu}]/√2 (HRF Eq. 3, 34)."""

    name = "hyperbolic"
    description = "hyperbolic/antithetic positive features (SM++, FAVOR+)"
    paper = "HRF Eq. 3"
    outputs = 2
    importance_tilts = (2.0, -2.0)

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        u = proj.project(X)
        return np.stack([u, -u], axis=-1), None, -0.5 * sq_norms(X) - 0.5 * np.log(2.0)

    def dtype_parts(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any], dt, memo: dict
    ) -> Parts:
        """[exp(ωᵀx − ‖x‖²/2), exp(−ωᵀx − ‖x‖²/2)]/√(2M) in the dtype (HRF Eq. 3)."""
        u, h = project(proj, X, dt, memo), half_sq(X)[..., None]
        c = dt(1.0 / np.sqrt(2 * proj.count))
        e = np.concatenate([u - h, -u - h], axis=-1)
        return Parts(e, np.full(e.shape, c, dt), True)


@register_component
class Sign(Component):
    """Sign features sgn(ωᵀu) (HRF Eq. 42): E = 1 - 2θ/π, the arc-cosine kernel of order 0.

    Used by the angular hybrid through λ̂ = ½ - ½·(sign estimate) = θ/π estimated unbiasedly. As a
    softmax estimator on its own it is meaningless; it estimates 1 - 2θ/π, not SM.
    """

    name = "sign"
    description = "angle (Goemans–Williamson sign) features; estimates 1 - 2θ/π"
    paper = "HRF Eq. 19, 42; CSE eq. 8"
    unbiased = True  # for its own kernel, 1 - 2θ/π
    kernels = ("angular",)
    positive = False

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        u = proj.project(X)
        signs = np.where(u >= 0, 1.0, -1.0)  # sgn(0) = +1 (CSE eqs. 8-10; docs/methods.md#sign)
        return None, signs[..., None], np.zeros(X.shape[:-1])


@register_component
class TrigPhase(Component):
    """√2 e^{‖u‖²/2} cos(ωᵀu + b) (DERF Eqs. 4-5); b from the projections' ``phase``."""

    name = "trig-phase"
    description = "random-phase trigonometric features √2 cos(ωᵀu + b) (DERF's TrigRF)"
    paper = "DERF Eqs. 4-5"
    positive = False
    random_phase = True
    importance_tilts = None

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        """(None, cos(ωᵀu + b) of shape (draws, N, M, 1), ½‖u‖² + ½ log 2)."""
        if proj.phase is None:
            raise ValueError("trig-phase needs projections drawn with their phases (sample())")
        u = proj.project(X)
        u += proj.phase[:, None, :].astype(u.dtype, copy=False)
        np.cos(u, out=u)
        return None, u[..., None], 0.5 * sq_norms(X) + 0.5 * np.log(2.0)
