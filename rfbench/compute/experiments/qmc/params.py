"""The parameters of the qmc experiment (docs/experiments.md#parameters-of-qmc)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from rfbench.compute.experiments.params import ExperimentParams, Values
from rfbench.compute.kernels import KERNELS


class Params(ExperimentParams):
    """MSE of kernel estimates on random pairs of real data rows (HRF Table 1)."""

    datasets: Values[str] = Field(
        ["wine", "boston"],
        description="data sets (wine = UCI Wine 178×13; boston = legacy Boston housing 506×13)",
    )
    estimators: Values[str] = Field(
        [
            "angular-hybrid@orf",
            "angular-hybrid@iid",
            "trig@orf",
            "hyperbolic@orf",
            "trig@orf-fast",
            "hyperbolic@orf-fast",
            "trig@sorf",
            "hyperbolic@sorf",
            "trig@halton",
            "hyperbolic@halton",
            "trig@iid",
            "hyperbolic@iid",
        ],
        min_length=1,
        description="estimator names; hybrids use (m, n), the others `features` projections",
    )
    features: int = Field(
        512, ge=1, description="projections of the non-hybrid estimators (paper: 512)"
    )
    m: int = Field(
        64, ge=1, description="base projections of a hybrid (FLOP-matched: m·n = features)"
    )
    n: int = Field(8, ge=1, description="λ projections of a hybrid")
    pairs: int = Field(100, ge=2, description="number of random pairs (x_i, x_j), i ≠ j")
    pair_seed: int = Field(
        0,
        ge=0,
        description="seed of np.random.default_rng choosing the pairs (shared by estimators)",
    )
    reps: int = Field(200, ge=2, description="independent feature draws, each applied to all pairs")
    norm: Values[Annotated[float, Field(gt=0)]] = Field(
        [1.0], min_length=1, description="L2 norm of the preprocessed rows (see scaling)"
    )
    scaling: Literal["rows", "max", "mean"] = Field(
        "rows", description="rows: every row scaled to `norm`; max/mean: one factor for all rows"
    )
    kernel: Literal[KERNELS] = Field("softmax", description="softmax (the paper) or gaussian")
