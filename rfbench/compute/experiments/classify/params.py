"""The parameters of the classify experiment (docs/experiments.md#parameters-of-classify)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from rfbench.compute.datasets import PROTOCOLS
from rfbench.compute.experiments.classify.data import UCI8
from rfbench.compute.experiments.classify.simrf_replay import STREAMS
from rfbench.compute.experiments.params import ConfigError, ExperimentParams, Listed, Values
from rfbench.compute.sequential import STOP_RULES

#: the ``dtype`` option: float32 with a float64 fallback (auto), or one precision throughout
DTYPES: dict[str, Any] = {"auto": "auto", "float32": np.float32, "float64": np.float64}
SPLITS = tuple(PROTOCOLS)
#: the logger of the notices of renamed parameters (rfbench.compute.experiments.params.renamed)
_log = logging.getLogger("rfbench.params")


def budget_given(values: Mapping[str, Any]) -> bool:
    """Whether raw parameter ``values`` size the run by a feature budget (``budget`` non-empty)."""
    return values.get("budget") not in (None, [], ())


def as_budget(values: Mapping[str, Any], default_m: list[int]) -> dict[str, Any]:
    """Raw ``values`` with the deprecated ``count_features = true`` given as ``budget = m`` (a
    one-line notice); ConfigError if it comes with a budget or with m_per_d (m·d features)."""
    out = dict(values)
    if out.get("count_features") is not True:
        return out
    if budget_given(out):
        raise ConfigError(
            "both 'budget' and its old form 'count_features' are given for experiment "
            "'classify' (give 'budget' only)"
        )
    if out.get("m_per_d", True) is True:
        raise ConfigError(
            "'count_features' = true with 'm_per_d' = true (m·d features) has no budget form: "
            "give 'budget' = the features (m_per_d does not apply to it)"
        )
    m = out.pop("m", default_m)
    del out["count_features"]
    _log.warning(
        "rfbench: 'count_features' = true with 'm' = %r of experiment 'classify' is now 'budget' "
        "= %r (the old form is accepted until the next release)",
        m,
        m,
    )
    return {**out, "budget": m}


class Params(ExperimentParams):
    """Kernel-regression classification with random features vs the exact kernel."""

    dataset: Values[str] = Field(
        list(UCI8),
        description=f"data sets (rfbench list datasets); the papers' eight: {', '.join(UCI8)}",
    )
    protocol: Literal[SPLITS] = Field(
        "simrf",
        description="split: simrf (95/5 train/test) or derf (90/5/5 train/validation/test)",
    )
    estimators: Values[str] = Field(
        ["positive@iid", "positive@orf", "positive@simrf"],
        description="component@weights names, e.g. positive@simrf, sderf@orf, trig@orf",
    )
    kernel: Literal["gaussian", "softmax"] = Field(
        "gaussian", description="gaussian (the papers') or softmax"
    )
    sigma: Values[Annotated[float, Field(ge=0)]] = Field(
        [0.0],
        min_length=1,
        description="input scales σ (x -> σx); 0 = the published per-data-set σ (wine: our "
        "searched one), else SVC's gamma='scale' rule σ = √(2/(d·Var X)) on the training split "
        "(rfbench.sklearn's default: a closed form, γ‖x − y‖² ≈ 2 at any width); several = a grid",
        json_schema_extra={"rule": "0 alone, or each > 0"},
    )
    m: Values[Annotated[int, Field(ge=1)]] = Field(
        [1, 2, 4, 10],
        description="random projections M (times d when m_per_d); or give budget instead",
        json_schema_extra={"rule": "each >= 1; non-empty unless budget"},
    )
    budget: Values[Annotated[int, Field(ge=1)]] = Field(
        [],
        description="feature budgets F instead of m: each estimator gets ⌈F/l⌉ projections, l its "
        "features per projection (trig@*: 2); m_per_d does not apply; empty = m sizes the run",
        json_schema_extra={"rule": "each >= 1; not with m"},
    )
    m_per_d: bool = Field(
        True, description="read m as multiples of d (SimRF m/d) instead of absolute M (m only)"
    )
    pad: bool = Field(
        False, description="zero-pad d to a power of two and use it for m/d (SimRF Table 3)"
    )
    trials: int = Field(
        500, ge=1, description="random-feature draws per point (the test accuracy's trials)"
    )
    trials_by_dataset: dict[str, Annotated[int, Field(ge=1)]] = Field(
        {}, description="trials of single data sets, overriding trials (a table name = n)"
    )
    val_trials: int = Field(50, ge=1, description="draws per σ on the validation split when tuning")
    dtype: Literal[tuple(DTYPES)] = Field(
        "auto", description="auto (float32 where exact enough, else float64), float32 or float64"
    )
    count_features: bool = Field(
        False,
        description="deprecated (until the next release): true reads m as features, i.e. "
        "budget = m (with m_per_d = false)",
    )
    tune: bool = Field(
        False,
        description="choose σ per (data set, estimator, m or budget) on the validation split "
        "(protocol derf)",
    )
    fit: Literal["queries", "train"] = Field(
        "queries",
        description="data-dependent fit on (σ·queries, σ·train) [queries] or (σ·train, σ·train)",
    )
    exact: bool = Field(True, description="also the exact-kernel classifier")
    compat: bool = Field(
        True, description="the SimRF authors' loader quirk (drops the last row), giving their split"
    )
    split_seed: int = Field(42, description="seed of the fixed permutation split")
    subset: Listed[Annotated[int, Field(ge=0)]] = Field(
        [0, 0],
        min_length=2,
        max_length=2,
        description="first N_train, N_eval rows of subset_datasets (0,0 = all; SimRF Fig. 10)",
        json_schema_extra={"rule": "0,0, or each >= 1"},
    )
    subset_datasets: Values[str] = Field(
        ["nursery", "chess"], description="data sets the subset applies to"
    )
    data: str = Field(
        "",
        description="the user's table instead of the data sets: PATH#TARGET[@SHA] of a "
        ".csv/.parquet (TARGET = the label column, the other columns numeric features; σ default: "
        "the gamma='scale' rule)",
    )
    stop: Literal[STOP_RULES] = Field(
        "fixed",
        description="fixed: every draw up to trials; resolved: draws in batches until every "
        "comparison of the cell (compare minus each other estimator) is resolved by an "
        "anytime-valid confidence sequence, trials the cap (docs/experiments.md#classify-stop)",
    )
    batch: int = Field(50, ge=2, description="draws per look with stop = resolved")
    compare: str = Field(
        "",
        description="with stop = resolved: the estimator compared with every other one of a "
        "cell; empty = the first of estimators",
    )
    alternatives: Values[str] = Field(
        [],
        description="with stop = resolved: estimators that are readings of one method (DERF "
        "Fig. 3's two TrigRFs); the question 'is compare the best?' is resolved for each reading, "
        "each keeping one of them as a rival",
    )
    select_sigma: bool = Field(
        False,
        description="with stop = resolved and a σ grid: the question is which σ is the most "
        "accurate (SimRF App. B.1); every σ shares the draws and one clearly behind the best "
        "draws no further (docs/experiments.md#classify-stop)",
    )
    stream: Literal[STREAMS] = Field(
        "rfbench",
        description="rfbench, or released: replay the SimRF authors' code "
        "(rfbench.compute.experiments.simrf_replay)",
    )

    @model_validator(mode="before")
    @classmethod
    def _m_or_budget(cls, values: Any) -> Any:
        """Projections m or a feature budget, never both (count_features: :func:`as_budget`); a
        budget leaves m empty."""
        if not isinstance(values, Mapping):
            return values
        values = as_budget(values, cls.model_fields["m"].default)
        if not budget_given(values):
            return values
        if values.get("m") not in (None, [], ()):
            raise ConfigError(
                f"both 'm' (projections) and 'budget' (features) are given for experiment "
                f"'classify': give one (m = {values['m']!r}, budget = {values['budget']!r})"
            )
        return {**values, "m": []}

    @model_validator(mode="after")
    def _sized(self) -> Params:
        """m or budget sizes the run."""
        if not self.m and not self.budget:
            raise ConfigError.bad_value("m", self.m, "one or more projections, or a budget")
        return self

    @field_validator("sigma")
    @classmethod
    def _zero_alone(cls, value: list[float]) -> list[float]:
        """0 (the published σ) alone, or positive scales."""
        if 0.0 in value and len(value) > 1:
            raise ConfigError.bad_value("sigma", value, "0 alone, or positive values")
        return value

    @field_validator("subset")
    @classmethod
    def _all_or_sizes(cls, value: list[int]) -> list[int]:
        """0,0 (all rows) or two sizes >= 1."""
        if value != [0, 0] and min(value) < 1:
            raise ConfigError.bad_value("subset", value, "0,0 or two >= 1")
        return value
