"""The parameters of the similarity experiment (docs/experiments.md#parameters-of-similarity)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from rfbench.compute import models
from rfbench.compute.experiments.params import ExperimentParams, Values

#: every kind of method of the attention study (issue 41): random maps, the fitted coupling,
#: Nyström, the deterministic Taylor map, a learned map, the local methods
METHODS = [
    "positive@iid", "hyperbolic@orf", "positive@fitted", "nystrom", "taylor2", "hedgehog",
    "window", "window+positive@iid", "top-k",
]  # fmt: skip


class Params(ExperimentParams):
    """Encoders with every layer's softmax replaced, scored on human document similarity."""

    models: Values[str] = Field(
        [models.DEFAULT_MODEL, *models.PACKAGED],
        min_length=1,
        description="encoders: a BERT-family folder, "
        f"{models.DEFAULT_MODEL} (the installed default) or a packaged model ("
        + ", ".join(models.PACKAGED)
        + ")",
    )
    methods: Values[str] = Field(
        METHODS,
        min_length=1,
        description="methods swapped into every layer, named as in rfbench attention: registry "
        "names (softmax kernel) or window, window+<registry name>, top-k",
    )
    budget: Values[Annotated[int, Field(ge=1)]] = Field(
        [64],
        min_length=1,
        description="feature budgets F (the attention study's rules: ⌊F/l⌋ projections, a "
        "window of F keys, F/2 keys + F/2 features, k = F)",
    )
    draws: int = Field(
        5, ge=2, description="independent draws of a random method (one draw per layer and head)"
    )
    bootstrap: int = Field(
        1000, ge=20, description="bootstrap resamples of the documents (the intervals)"
    )
    documents: int = Field(
        0, ge=0, description="score the first N documents of the set (0 = all 50)"
    )
    fit_tokens: int = Field(
        512,
        ge=3,
        description="tokens of the fitting text (GPL-3) the fitted and learned maps fit on "
        "(clamped to the model's positions)",
    )
