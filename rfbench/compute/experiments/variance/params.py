"""The parameters of the variance experiment (docs/experiments.md#parameters-of-variance)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from rfbench.compute.experiments.params import ConfigError, ExperimentParams, Values
from rfbench.compute.experiments.variance.derf_sets import IMAGE_DIM, REGIMES
from rfbench.compute.features.derf import MECHANISMS as FITTED

#: the feature mechanisms compared (trig = random-phase TrigRF; the fitted DERF family)
MECHANISMS = ("trig", "trig-sincos", "positive", *FITTED)


class Params(ExperimentParams):
    """Closed-form relative variance of the DERF mechanisms over sets of points (DERF Figs 1-2)."""

    regimes: Values[Literal[REGIMES]] = Field(
        list(REGIMES), min_length=1, description=f"point-set regimes: {', '.join(REGIMES)}"
    )
    sigma: Values[Annotated[float, Field(gt=0)]] = Field(
        [round(0.1 * k, 1) for k in range(1, 11)],
        min_length=1,
        description="scales σ of the sets (the paper's x-axis, 0.1 ≤ σ ≤ 1)",
    )
    d: int = Field(64, ge=1, description=f"dimension (image regimes need {IMAGE_DIM})")
    points: int = Field(1024, ge=2, description="L, points per set (all L² pairs are averaged)")
    set_pairs: int = Field(5, ge=1, description="independent pairs of sets per (regime, σ)")
    mechanisms: Values[Literal[MECHANISMS]] = Field(
        ["trig", "positive", "gerf", "aderf", "sderf", "saderf"],
        min_length=1,
        description=f"feature mechanisms: {', '.join(MECHANISMS)} (trig = random-phase TrigRF)",
    )
    power: int = Field(
        2,
        ge=1,
        le=2,
        description="2: Var/K² (default, scale-free); 1: Var/K (the paper's literal wording)",
    )
    reduce: Literal["mean", "logmeanexp"] = Field(
        "mean", description="mean (of the logs, default) or logmeanexp (log of the mean)"
    )
    mc_sigma_max: float = Field(0.1, ge=0, description="Monte Carlo check at σ ≤ this (0: none)")
    mc_pairs: int = Field(
        8, ge=1, description="MC subsample: mc_pairs × mc_pairs pairs of the first set pair"
    )
    mc_samples: int = Field(
        100_000,
        ge=0,
        description="MC one-feature estimates per pair",
        json_schema_extra={"rule": "0, or >= 2"},
    )
    on_missing: Literal["skip", "error"] = Field(
        "skip", description="skip (record why) or error when an image data set is absent"
    )

    @field_validator("mc_samples")
    @classmethod
    def _none_or_several(cls, value: int) -> int:
        """0 (no Monte Carlo check) or at least 2 (a standard error)."""
        if value == 1:
            raise ConfigError.bad_value("mc_samples", value, "0 or an integer >= 2")
        return value
