"""GERF random features with a fixed A: a data-free member of the GERF family (a worked plugin).

Generalised exponential random features (GERFs; Likhosherstov et al., "Chefs' Random Tables",
2022; restated in DERF (Likhosherstov et al., 2023), Eq. 6) estimate the softmax kernel
SM(x, y) = exp(xᵀy) with ω ~ N(0, I_d) and

    f(ω, u) = D·exp(A‖ω‖² + B·ωᵀu + C‖u‖²),   B = √(1 − 4A),  C = −1/2,  D = (1 − 4A)^{d/4},

for any real A < 1/8 (then E[f(ω, x) f(ω, y)] = SM(x, y) and the variance is finite). The paper
chooses A from data statistics (rfbench's ``gerf``); this component keeps A fixed (option ``A``,
default −1/8), so it needs no fit and works with every coupling after '@'. A = 0 gives the
positive features SM⁺ exactly. The exponent's x-term is read as C‖u‖² (Eq. 6 prints C‖x‖²/2 with
C = −0.5, which would not be unbiased). Its single-projection variance is DERF Eq. 7:
Var = exp(L) − SM², L = d·log((1 − 4A)/√(1 − 8A)) + 2(1 − 4A)/(1 − 8A)·‖x + y‖² − ‖x‖² − ‖y‖².

Importing this module registers ``gerf-fixed@<weights>`` for every coupling; the package's entry
point (group ``rfbench.plugins``, in pyproject.toml) makes rfbench import it on first use.

Capabilities (docs/extending.md#capabilities): besides the required ``log_terms``, the component
declares its reduced-precision form (``dtype_parts``), so ``rfbench precision`` runs it in
float32/float16/bfloat16 (an estimator without it gets a skipped row saying so); it has no
importance sampler and, being data-free, fits nothing (``fit_flops`` is 0 by default).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.api import (
    Component,
    Parts,
    Projections,
    Side,
    half_sq,
    project,
    register_component,
    sq_norms,
)


@register_component
class FixedGERF(Component):
    """f(ω, u) = (1 − 4A)^{d/4} exp(A‖ω‖² + √(1 − 4A) ωᵀu − ‖u‖²/2), A fixed (DERF Eq. 6)."""

    name = "gerf-fixed"
    description = "GERF positive features with a fixed A (no data fit; A = 0 is SM+)"
    paper = "DERF Eq. 6-7 (GERF, Likhosherstov et al. 2022)"

    def __init__(self, A: float = -0.125) -> None:
        if not (np.isfinite(A) and A < 0.125):
            raise ValueError(f"gerf-fixed needs a finite A < 1/8, got {A!r}")
        self.A = float(A)

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        A = self.A
        log_mag = np.sqrt(1.0 - 4.0 * A) * proj.project(X) + A * proj.sq_norms[:, None, :]
        log_D = 0.25 * proj.d * np.log1p(-4.0 * A)
        return log_mag[..., None], None, log_D - 0.5 * sq_norms(X)

    def dtype_parts(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any], dt, memo: dict
    ) -> Parts:
        """The same map with every step in the dtype ``dt`` (the optional capability behind
        ``rfbench precision``): exponent √(1 − 4A)·ωᵀx + A‖ω‖² − ‖x‖²/2 + log D, factor 1/√M.
        X arrives in ``dt``; ``project`` and ``half_sq`` round as float16/bfloat16 code does."""
        u, h = project(proj, X, dt, memo), half_sq(X)[..., None]
        quad = proj.sq_norms.astype(dt)[:, None, :] * dt(self.A)
        log_D = dt(0.25 * proj.d * np.log1p(-4.0 * self.A))
        e = u * dt(np.sqrt(1.0 - 4.0 * self.A)) + quad - h + log_D
        return Parts(e, np.full(e.shape, dt(1.0 / np.sqrt(proj.count)), dt), True)


def single_variance(A: float, x: np.ndarray, y: np.ndarray) -> float:
    """Var f(ω, x)f(ω, y) for one ω (DERF Eq. 7); the mean of m i.i.d. terms has 1/m of it."""
    d = len(x)
    L = (
        d * np.log((1.0 - 4.0 * A) / np.sqrt(1.0 - 8.0 * A))
        + 2.0 * (1.0 - 4.0 * A) / (1.0 - 8.0 * A) * float(np.sum((x + y) ** 2))
        - float(x @ x)
        - float(y @ y)
    )
    return float(np.exp(L) - np.exp(2.0 * float(x @ y)))
