"""The random-phase TrigRF √2 e^{‖x‖²/2} cos(ωᵀx + b), b ~ U[0, 2π] (DERF Eqs. 4-5;
docs/methods.md#trig).

The phases are drawn with the projections and carried by them (``Projections.phase``), so both
sides, and draws merged into one projection set, keep each ω with its b."""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute.features.base import Component, Projections, Side
from rfbench.compute.features.registry import register_component
from rfbench.compute.kernels import sq_norms


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
