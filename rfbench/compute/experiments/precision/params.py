"""The parameters of the precision experiment (docs/experiments.md#parameters-of-precision)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from rfbench.compute.experiments.params import ExperimentParams, Values
from rfbench.compute.experiments.precision.maps import DTYPES, FORMS

DTYPE_NAMES = tuple(DTYPES)


class Params(ExperimentParams):
    """Feature maps in float64/32/16 and bfloat16, in three forms, against the float64 answer."""

    renamed = {"m": "projection_budget"}

    components: Values[str] = Field(
        ["trig", "positive", "hyperbolic", "gerf", "sderf", "angular-hybrid"],
        min_length=1,
        description="feature maps (trig, positive, hyperbolic, gerf/aderf/sderf/saderf, "
        "angular-hybrid)",
    )
    couplings: Values[str] = Field(
        ["iid", "orf", "simrf"],
        min_length=1,
        description="couplings of ω (Monte Carlo ones: iid, orf, simrf, ...)",
    )
    dtypes: Values[Literal[DTYPE_NAMES]] = Field(
        list(DTYPES), min_length=1, description="float64, float32, float16, bfloat16"
    )
    forms: Values[Literal[FORMS]] = Field(
        list(FORMS),
        min_length=1,
        description="naive, stabilised (FAVOR+ max shift), logspace (rfbench's map, cast at the "
        "end)",
    )
    r: Values[Annotated[float, Field(gt=0)]] = Field(
        [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0],
        min_length=1,
        description="input norms ‖x‖ = ‖y‖ = r",
    )
    projection_budget: int = Field(
        64,
        ge=1,
        description="projection budget M (hybrids: M // n per base; old name m, accepted until "
        "the next release)",
    )
    n: int = Field(8, ge=1, description="λ projections of the angular hybrid")
    d: int = Field(64, ge=2, description="input dimension")
    angles: int = Field(7, ge=2, description="angles θ in [0, π] of the kernel pairs")
    samples: int = Field(250, ge=2, description="independent draws per kernel pair")
    attention_points: int = Field(
        32, ge=2, description="L queries and L keys for the attention error"
    )
    attention_draws: int = Field(20, ge=1, description="independent draws for the attention error")
    stabiliser: float = Field(
        1e-6, ge=0, description="ε added by the stabilised form to exp(E - max) of positive maps"
    )
