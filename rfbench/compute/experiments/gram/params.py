"""The parameters of the gram experiment (docs/experiments.md#parameters-of-gram)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from rfbench.compute.experiments.params import ConfigError, ExperimentParams, Values
from rfbench.compute.kernels import KERNELS

#: the input models: synthetic points, queries and keys, the user's file, a registry data set
MODES = ("self", "attention", "file", "dataset")


class Params(ExperimentParams):
    """Gram (or attention) matrices of N points estimated ``reps`` times per cell."""

    inputs: Literal[MODES] = Field(
        "self",
        description="self: K(X, X), X ~ N(0, σ²I) (SimRF Fig. 7); attention: K(Q, K), Q, K ~ "
        "N(0, r²I/d) plus the row-normalised attention (Spectraformer proxy)",
    )
    estimators: Values[str] = Field(
        ["positive@iid", "positive@orf", "positive@simrf", "positive@simrf-plus"],
        min_length=1,
        description="registry names; '*' wildcards over component@weights ('*@*' = all)",
    )
    kernels: Values[Literal[KERNELS]] = Field(
        ["gaussian"], min_length=1, description="softmax and/or gaussian"
    )
    d: int = Field(64, ge=1, description="input dimension")
    n_points: int = Field(
        64,
        ge=1,
        description="number of points N (self) or of queries and of keys (attention)",
    )
    m: Values[Annotated[int, Field(ge=1)]] = Field(
        [64, 128, 256, 640], min_length=1, description="numbers of random projections"
    )
    sigma: Values[Annotated[float, Field(ge=0)]] = Field(
        [0.1],
        min_length=1,
        description="per-coordinate standard deviation of the points (inputs = self)",
    )
    r: Values[Annotated[float, Field(gt=0)]] = Field(
        [0.5, 1.0],
        min_length=1,
        description="typical norm of queries and keys, std r/√d per coordinate (inputs = "
        "attention)",
    )
    reps: int = Field(
        1000, ge=2, description="independent feature draws per cell (200 with --data unless given)"
    )
    data_seed: int = Field(0, ge=0, description="seed of the fixed input points")
    data: str = Field(
        "",
        description="inputs = file: the user's points, PATH[@SHA] of a .npy/.npz (X, or Q and "
        "K), .csv or .parquet (numeric columns); d and n_points come from the file",
    )
    dataset: Values[str] = Field(
        [],
        description="inputs = dataset: registry data sets (rfbench list datasets), n_points rows "
        "each, z-scored, times sigma (0: 1/(2 x mean pairwise distance))",
    )
    m_per_d: Values[Annotated[float, Field(ge=0)]] = Field(
        [0.0],
        min_length=1,
        description="projections per input dimension: m = round(m_per_d · d) replaces m (0: use m)",
        json_schema_extra={"rule": "0 alone, or each > 0"},
    )

    @field_validator("m_per_d")
    @classmethod
    def _zero_alone(cls, value: list[float]) -> list[float]:
        """0 (use ``m``) alone, or positive factors."""
        if value != [0.0] and 0.0 in value:
            raise ConfigError.bad_value("m_per_d", value, "0, or positive numbers")
        return value
