"""The random-phase TrigRF of DERF Eqs. 4-5: one feature per projection,

    f(ω, b, x) = √2 e^{‖x‖²/2} cos(ωᵀx + b),   ω ~ N(0, I_d),  b ~ U[0, 2π],

so that E[f(ω, b, x) f(ω, b, y)] = e^{(‖x‖²+‖y‖²)/2} E cos(ωᵀ(x − y)) = exp(xᵀy) (the softmax
kernel; the Gaussian after the K^(α) change). The per-feature variance exceeds that of a [sin, cos]
pair per ω (``trig``, HRF Eq. 2) by ½ e^{‖x‖²+‖y‖²} (the mean of 2 cos² of a uniform phase: DERF
Eq. 5; docs/methods.md#trig), which is why the DERF paper's TrigRF is weaker at equal feature count
M than the library's ``trig`` with M/2 projections.

The phases b are drawn with the projections (one per ω and draw, :attr:`Component.random_phase`)
and carried by them (``Projections.phase``), so the query and key maps share them and a batch of
draws merged into one set of projections (kernel-regression classification) keeps each ω with its b.
"""

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
