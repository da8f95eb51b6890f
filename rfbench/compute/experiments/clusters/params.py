"""The parameters of the clusters experiment (docs/experiments.md#parameters-of-clusters)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from rfbench.compute.experiments.clusters.legacy_ortho import SETTINGS
from rfbench.compute.experiments.params import ExperimentParams, Values

#: the estimators of HRF Table 3 (protocol paper runs these)
PAPER_ESTIMATORS = ("cluster-hybrid", "positive@iid", "trig@iid")
PROTOCOLS = ("paper", "rfbench")
DATASETS = tuple(SETTINGS)


class Params(ExperimentParams):
    """Gram-matrix MSE on HRF's synthetic clustered queries and keys."""

    datasets: Values[Literal[DATASETS]] = Field(
        list(SETTINGS),
        min_length=1,
        description="s1, s2 (σ = 1; s kept coordinates 12, 25), s3, s4 (σ = √10)",
    )
    m: Values[Annotated[int, Field(ge=1)]] = Field(
        [20, 50, 80, 100, 120, 150, 200], min_length=1, description="numbers of random projections"
    )
    reps: int = Field(
        20, ge=1, description="repetitions (protocol paper: RandomState(1234 + rep) projections)"
    )
    protocol: Values[Literal[PROTOCOLS]] = Field(
        list(PROTOCOLS),
        min_length=1,
        description="paper: exact replay of the notebook's streams; rfbench: registry estimators",
    )
    estimators: Values[str] = Field(
        list(PAPER_ESTIMATORS),
        min_length=1,
        description="estimators of protocol rfbench (protocol paper runs the paper's three)",
    )
    kmeans_seed: int = Field(
        0, ge=0, description="seed of the replay's k-means (the notebook's was unseeded)"
    )
