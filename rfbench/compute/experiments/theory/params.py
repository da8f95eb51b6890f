"""The parameters of the theory experiment (docs/experiments.md#parameters-of-theory)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from rfbench.compute.experiments.params import ExperimentParams, Values

#: the figures drawn from closed forms (each curve reads the keys with its prefix)
CURVES = ("hrf-fig1", "simrf-fig4", "simrf-fig5", "simrf-fig6")


class Params(ExperimentParams):
    """Closed-form curves of HRF Fig. 1 and SimRF Figs 4-6 (no sampling)."""

    curves: Values[Literal[CURVES]] = Field(
        list(CURVES), min_length=1, description=f"which figures: {', '.join(CURVES)}"
    )
    hrf_estimators: Values[str] = Field(
        ["trig@iid", "hyperbolic@iid", "angular-hybrid@iid"],
        min_length=1,
        description="HRF Fig. 1 estimators (closed-form MSE needed)",
    )
    hrf_m: int = Field(10, ge=1, description="HRF Fig. 1: projections per base estimator")
    hrf_n: int = Field(1, ge=1, description="HRF Fig. 1: λ projections of a hybrid")
    hrf_r_max: float = Field(5.0, gt=0, description="HRF Fig. 1: largest input norm r")
    hrf_r_points: int = Field(51, ge=2, description="HRF Fig. 1: grid points in r")
    hrf_theta_points: int = Field(61, ge=2, description="HRF Fig. 1: grid points in θ ∈ [0, π]")
    conformity_d: int = Field(6, ge=2, description="SimRF Fig. 4: d = m")
    conformity_v: float = Field(1.0, gt=0, description="SimRF Fig. 4: v = ‖x + y‖")
    conformity_iid_couplings: int = Field(
        100, ge=2, description="SimRF Fig. 4: random iid direction sets averaged"
    )
    conformity_passes: int = Field(
        15, ge=0, description="SimRF Fig. 4: SimRF+ full passes shown (0..passes)"
    )
    conformity_norm_draws: int = Field(
        1, ge=1, description="SimRF Fig. 4: independent draws of the norms (repetitions)"
    )
    density_d: int = Field(6, ge=2, description="SimRF Fig. 5: d")
    density_w_max: float = Field(10.0, gt=0, description="SimRF Fig. 5: largest w_ij")
    density_w_points: int = Field(201, ge=2, description="SimRF Fig. 5: grid points in w")
    density_v: Values[Annotated[float, Field(ge=0)]] = Field(
        [1.0], description="SimRF Fig. 5: v values of the integrand f(w, v)"
    )
    ratio_d: int = Field(64, ge=2, description="SimRF Fig. 6: d")
    ratio_m: int = Field(64, ge=1, description="SimRF Fig. 6: m (one block if m <= d)")
    ratio_v_min: float = Field(1e-3, gt=0, description="SimRF Fig. 6: smallest v > 0 (log grid)")
    ratio_v_max: float = Field(100.0, description="SimRF Fig. 6: largest v")
    ratio_v_points: int = Field(
        101, ge=2, description="SimRF Fig. 6: grid points in v (plus the v -> 0 limit at v = 0)"
    )
