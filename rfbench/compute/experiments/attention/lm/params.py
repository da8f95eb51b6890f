"""The parameters of the lm experiment (docs/experiments.md#parameters-of-lm)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from rfbench.compute.experiments.params import ExperimentParams, Values
from rfbench.compute.models import lm

#: every kind of method of the attention study: random maps (iid and orthogonal), a fitted
#: coupling, learned maps, the window (with sinks), window + map, the top-k oracle
METHODS = [
    "positive@orf",
    "hyperbolic@orf",
    "gerf@orf",
    "positive@fitted",
    "hedgehog",
    "t2r",
    "window",
    "window+positive@orf",
    "window+hedgehog",
    "top-k",
]


class Params(ExperimentParams):
    """A causal language model's perplexity and passkey recall with its attention swapped."""

    model: str = Field(
        lm.DEFAULT_LM,
        description="the causal LM: "
        + ", ".join(f"{e.name} = {e.title} ({e.install})" for e in lm.LMS.values()),
    )
    tokens: int = Field(256, ge=8, description="tokens per measured sequence")
    sequences: int = Field(
        1, ge=1, description="consecutive sequences of the held-out text (GFDL-1.3) measured"
    )
    fit_tokens: int = Field(
        128,
        ge=0,
        description="tokens of the fitting text (GPL-3) learned maps and fitted couplings are "
        "fitted on, in sequences of `tokens` tokens (one map per layer and key/value head; 0 = "
        "the whole text)",
    )
    estimators: Values[str] = Field(
        METHODS,
        min_length=1,
        description="registry names (softmax kernel), window, window+<registry name>, top-k; "
        "exact and uniform attention always run",
    )
    budget: Values[Annotated[int, Field(ge=1)]] = Field(
        [16, 32, 64], min_length=1, description="feature budgets F (as rfbench attention's)"
    )
    sinks: int = Field(
        4,
        ge=0,
        description="always-visible first tokens among the exact keys of window and window+map "
        "(StreamingLLM's attention sinks; 0 = a plain sliding window)",
    )
    draws: int = Field(3, ge=1, description="independent draws of each random method")
    per_layer: Values[str] = Field(
        ["positive@orf", "hedgehog", "window"],
        description="methods also swapped into one layer at a time (the others exact), with "
        "uniform attention",
    )
    per_layer_budget: int = Field(64, ge=1, description="feature budget of the one-layer swaps")
    layers: Values[Annotated[int, Field(ge=0)]] = Field(
        [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 29],
        description="layers of the one-layer swaps ([] = every layer)",
    )
    head_layers: Values[Annotated[int, Field(ge=0)]] = Field(
        [0, 15, 29],
        description="layers whose heads get the attention study's head-level causal rows, on "
        "the first measured sequence at every budget ([] = none)",
    )
    passkey_lengths: Values[Annotated[int, Field(ge=8)]] = Field(
        [256, 512], description="passkey prompt lengths in tokens ([] = no passkey probe)"
    )
    passkey_trials: int = Field(3, ge=1, description="passkey prompts per length (seeded)")
    passkey_budget: int = Field(64, ge=1, description="feature budget of the passkey probe")
