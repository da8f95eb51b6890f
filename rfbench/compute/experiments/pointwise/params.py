"""The parameters of the pointwise experiment (docs/experiments.md#parameters-of-pointwise)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from rfbench.compute.experiments.params import ExperimentParams, Values
from rfbench.compute.features.hybrid import VARIANTS
from rfbench.compute.kernels import KERNELS


class Params(ExperimentParams):
    """One kernel value K(x, y), ‖x‖ = ‖y‖ = r at angle θ, estimated ``samples`` times."""

    renamed = {"m": "projection_budget"}

    estimators: Values[str] = Field(
        ["trig@iid", "hyperbolic@iid", "angular-hybrid@iid", "gaussian-hybrid@iid"],
        min_length=1,
        description="registry names, optionally with fixed sizes m[:n], e.g. trig@iid:256, "
        "angular-hybrid@iid:32:4",
    )
    projection_budget: Values[Annotated[int, Field(ge=1)]] = Field(
        [128],
        min_length=1,
        description="projection budgets M: projections of non-hybrids (hybrids: see flop_match; "
        "old name m, accepted until the next release)",
    )
    n: int = Field(
        8,
        ge=0,
        description="λ projections of angular/gaussian hybrids; 0 means n = m (the CSE paper)",
    )
    flop_match: bool = Field(
        True,
        description="hybrids get m = M // n base projections (m·n = M, "
        "docs/methods.md#hrf-flop-matching)",
    )
    variants: Values[Literal[VARIANTS]] = Field(
        ["independent"],
        min_length=1,
        description=f"sharing variants of the hybrids ({', '.join(VARIANTS)}); each hybrid runs "
        "those it supports",
    )
    kernel: Literal[KERNELS] = Field("softmax", description="softmax or gaussian")
    angles: int = Field(25, ge=2, description="number of angles θ in [0, π], endpoints included")
    samples: int = Field(10_000, ge=2, description="independent draws per angle")
    d: int = Field(64, ge=2, description="input dimension")
    r: Values[Annotated[float, Field(gt=0)]] = Field(
        [1.0, 1.25, 1.5], min_length=1, description="input norms ‖x‖ = ‖y‖ = r"
    )
    sigma: float = Field(
        1.0, gt=0, description="bandwidth σ of the gaussian hybrid's λ estimator (HRF App. F)"
    )
    common_draws: bool = Field(
        True, description="all angles of a curve share each draw (common random numbers)"
    )
    importance: bool = Field(
        False,
        description="add importance-sampled MSEs is_mse/is_rel_rmse (component@iid estimators)",
    )
    tail: float = Field(
        0.0,
        ge=0,
        description="with tail > 0: add per angle tail_share (the share of draws with K̂ > "
        "tail·K) and max_ratio (the largest K̂/K): draw-level outliers (CSE Fig. 3)",
    )
    paired: bool = Field(
        False,
        description="estimators of one radius share their base randomness (one job per r; "
        "iid/orf/simrf component estimators share one Gaussian array, all angles each draw)",
    )
    reference: str = Field(
        "", description="the estimators entry diff_mse compares against (default: the first)"
    )
    data: str = Field(
        "",
        description="the user's pairs instead of the (r, θ) grid: PATH[@SHA] of an .npz with Q "
        "and K (pairs Q[i], K[i]) or a matrix X (.npy/.npz/.csv/.parquet; pairs X[2i], X[2i+1])",
    )
    pairs: int = Field(25, ge=1, description="with data: the first this many pairs")
