"""The parameters of the cost experiment (docs/experiments.md#parameters-of-cost)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from rfbench.compute.experiments.params import ExperimentParams, Values


class Params(ExperimentParams):
    """Error against time and FLOPs, the crossover dimension and structured-projection timings."""

    renamed = {"m": "projection_budget", "crossover_m": "crossover_projection_budget"}

    estimators: Values[str] = Field(
        [
            "trig@iid",
            "trig@orf",
            "positive@iid",
            "positive@orf",
            "positive@simrf",
            "hyperbolic@iid",
            "hyperbolic@orf",
            "hyperbolic@simrf",
            "hyperbolic@sorf",
            "hyperbolic@orf-fast",
            "hyperbolic@halton",
            "gerf@iid",
            "sderf@iid",
            "angular-hybrid@iid",
            "cluster-hybrid@iid",
        ],
        min_length=1,
        description="registry names (hybrids get M // n projections per base)",
    )
    projection_budget: Values[Annotated[int, Field(ge=1)]] = Field(
        [16, 64, 256],
        min_length=1,
        description="projection budgets M (hybrids: M // n per base; old name m, accepted until "
        "the next release)",
    )
    n: int = Field(8, ge=1, description="λ projections of angular/gaussian hybrids")
    d: int = Field(64, ge=2, description="input dimension of the error-vs-time frontier")
    r: float = Field(1.0, gt=0, description="norm of every query and key")
    points: int = Field(256, ge=2, description="N queries and N keys of the frontier")
    samples: int = Field(20, ge=2, description="draws for the empirical error")
    repeats: int = Field(5, ge=1, description="timed repetitions (the minimum is reported)")
    target: float = Field(
        0.1, gt=0, description="target RMS relative Frobenius error ε of the crossover"
    )
    crossover_d: Values[Annotated[int, Field(ge=2)]] = Field(
        [16, 32, 64, 128, 256], min_length=1, description="dimensions d (= d_v) of the crossover"
    )
    crossover_projection_budget: int = Field(
        64,
        ge=1,
        description="projection budget M₀ at which the crossover's error is measured (hybrids: "
        "M₀ // n per base; old name crossover_m, accepted until the next release)",
    )
    crossover_points: int = Field(
        64, ge=2, description="queries and keys for the crossover's error"
    )
    projection_weights: Values[str] = Field(
        ["sorf", "orf-fast", "simrf-fast", "fastfood"],
        description="Hadamard couplings timed structured vs dense (may be empty)",
    )
    projection_d: Values[Annotated[int, Field(ge=2)]] = Field(
        [32, 64, 128, 256, 512, 1024],
        description="dimensions d of the structured-vs-dense projection timing",
    )
    projection_points: int = Field(
        1024, ge=1, description="inputs projected in the structured-vs-dense timing"
    )
