"""``rfbench attention --model <causal LM>``: the attention study on a language model's heads.

docs/experiments.md#attention-on-a-language-model. The attention experiment's jobs for a packaged
causal LM (rfbench.compute.models.lm.LMS), built from the lm experiment's code: ``baselines`` and
``heads`` on every query head of each measured layer, in causal form, on the exact pass over the
held-out text (rfbench.compute.experiments.attention.lm.heads: one draw or fitted map per
key/value head, shared by its query heads, each row naming its ``kv_head``), and — the LM's
swap-in score — ``perplexity`` with exact attention, uniform attention and every method in every
layer (``swap_per_layer``: one layer at a time), at ``swap_budget``, ``swap_trials`` draws of each
random method, on the first ``swap_tokens`` tokens of the held-out text
(rfbench.compute.experiments.attention.lm.runs). Options of the attention study that an LM does
not take (``--window``, ``--stop resolved``, ``--data``) are one line each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rfbench.compute.experiments import ConfigError, JobSpec
from rfbench.compute.experiments.attention.lm import data
from rfbench.compute.experiments.attention.lm.methods import EXACT, UNIFORM, Method
from rfbench.compute.features import registry
from rfbench.compute.models import lm

#: the quick profile's overrides for a language model (beside the attention study's own quick
#: profile): its first layer's heads and perplexity at one small budget, in seconds
QUICK: dict[str, Any] = {
    "layers": [0], "max_heads": 0, "budget": [16], "swap_budget": [16], "fit_tokens": 128,
}  # fmt: skip


def is_lm(model: str) -> bool:
    """Whether ``--model`` names a packaged causal language model."""
    return model in lm.LMS


def check_methods(names: list[str], budgets: list[int], sinks: int, option: str) -> None:
    """Each method at each budget, as the LM swaps it in (one ConfigError line otherwise)."""
    for name in names:
        for features in budgets:
            try:
                why = Method(name, features, sinks).check()
            except registry.UnknownEstimatorError as exc:
                raise ConfigError(str(exc)) from None
            except (ValueError, TypeError) as exc:
                raise ConfigError.bad_value("estimators", name, f"a softmax map ({exc})") from None
            if why:
                raise ConfigError.bad_value(option, features, why)


def validate(config: Mapping[str, Any]) -> None:
    """The attention study's config for a language model, checked before any weights are read;
    ``layers`` [] resolved to every layer.

    Raises
    ------
    ConfigError
        An option the LM does not take, a sequence longer than the model's positions or than the
        held-out text, a fitting text shorter than ``fit_tokens``, a budget a method cannot have,
        a layer the model does not have (one line each).
    """
    model = config["model"]
    if config["data"]:
        raise ConfigError("--data replaces the model: give --model or --data, not both")
    if config["window"]:
        raise ConfigError.bad_value(
            "window", config["window"], f"0 for {model} (its windows take their keys from F)"
        )
    if config["stop"] != "fixed":
        raise ConfigError.bad_value(
            "stop", config["stop"], f"fixed for {model} (its query heads share their draws)"
        )
    spec = lm.lm_config(model)
    for option, lengths in (("tokens", config["tokens"]), ("swap_tokens", [config["swap_tokens"]])):
        for t in lengths:
            if t > spec["context"]:
                raise ConfigError.bad_value(option, t, f"at most the model's {spec['context']}")
            data.held_out(model, t, 1)  # the held-out text long enough (one line)
    data.fitting(model, config["fit_tokens"])
    check_methods(config["estimators"], config["budget"], config["sinks"], "budget")
    if config["swap"]:
        check_methods(config["estimators"], config["swap_budget"], config["sinks"], "swap_budget")
        check_methods(config["swap_per_layer"], config["swap_budget"], config["sinks"],
                      "swap_budget")  # fmt: skip
    bad = [x for x in config["layers"] if x >= spec["layers"]]
    if bad:
        raise ConfigError.bad_value("layers", bad, f"layers 0..{spec['layers'] - 1} of the model")
    if not config["layers"]:
        config["layers"] = list(range(spec["layers"]))  # type: ignore[index]


def peak_memory(config: Mapping[str, Any]) -> int:
    """The decoder's weights and one sequence's states (from the model's config, before its
    weights are read), the attention study's T × T matrices of one head, the fitting passes'
    queries and keys."""
    t = max([*config["tokens"], config["swap_tokens"]])
    model = config["model"]
    return lm.lm_memory(model, t) + 8 * 16 * t * t + data.fit_memory(model, config["fit_tokens"])


def _fits(names: list[str]) -> bool:
    """Whether any method is fitted to the fitting text (a data-dependent map, alone or beside a
    window)."""
    maps = [m for m in (Method(name).map_name for name in names) if m is not None]
    return any(registry.get(m, kernel="softmax", m=1).data_dependent for m in maps)


def grid(config: Mapping[str, Any]) -> list[JobSpec]:
    """The jobs (module doc); the exact passes and the fitting passes run once, up front."""
    model = config["model"]
    budgets = tuple(config["budget"])
    fitting = _fits([*config["estimators"], *config["swap_per_layer"]])
    common = {"model": model, "dataset": model, "max_heads": config["max_heads"]}
    jobs = []
    for t in config["tokens"]:
        data.exact_pass(model, data.held_out(model, t, 1)[0])
        if fitting:
            data.fit_qk(model, config["fit_tokens"], t, 0)
        fit = data.fit_keys(config["fit_tokens"], t)
        for layer in config["layers"]:
            point = {**common, "tokens": t, "layer": layer}
            jobs.append(JobSpec(point, kind="baselines", budget=budgets,
                                matrix_rows=config["matrix_rows"]))  # fmt: skip
            jobs += [
                JobSpec(point, kind="heads", budget=f, estimators=tuple(config["estimators"]),
                        draws=config["draws"], sinks=config["sinks"], **fit,
                        significance=config["significance"], matrix_rows=config["matrix_rows"])
                for f in budgets
            ]  # fmt: skip
    if not config["swap"]:
        return jobs
    t = config["swap_tokens"]
    data.exact_pass(model, data.held_out(model, t, 1)[0])
    swap = {"model": model, "tokens": t, "sequences": 1, "sinks": config["sinks"],
            "draws": config["swap_trials"], **data.fit_keys(config["fit_tokens"], t)}  # fmt: skip
    every = [(EXACT, 0), (UNIFORM, 0)]
    every += [(e, f) for e in config["estimators"] for f in config["swap_budget"]]
    jobs += [JobSpec(swap, kind="perplexity", estimator=e, budget=f, layer=None) for e, f in every]
    one = [(UNIFORM, 0)] + [(e, f) for e in config["swap_per_layer"] for f in config["swap_budget"]]
    if config["swap_per_layer"]:
        jobs += [
            JobSpec(swap, kind="perplexity", estimator=e, budget=f, layer=layer)
            for layer in range(lm.lm_config(model)["layers"])
            for e, f in one
        ]
    return jobs


def run_job(spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The rows of one job (lm.heads or lm.runs)."""
    from rfbench.compute.experiments.attention.lm import heads, runs

    if spec["kind"] == "heads":
        return heads.heads_rows(spec, rng)
    if spec["kind"] == "baselines":
        return heads.baselines_rows(spec)
    if spec["kind"] == "passkey":
        return runs.passkey_rows(spec, rng)
    return runs.perplexity_rows(spec, rng)


def job_cost(spec: JobSpec) -> float:
    """Token-layers computed: tokens × layers swapped-and-after × draws (random methods); a
    heads job tokens × methods × draws, a baselines job tokens × ranks."""
    if spec["kind"] == "heads":
        return float(spec["tokens"] * len(spec["estimators"]) * spec["draws"])
    if spec["kind"] == "baselines":
        return float(spec["tokens"] * len(spec["budget"]))
    if spec["kind"] == "passkey":
        return float(spec["tokens"] * spec["trials"] * 30)
    method = Method(spec["estimator"], spec["budget"], spec["sinks"])
    draws = spec.get("draws", 1) if method.random else 1
    layers = 30 if spec.get("layer") is None else 30 - spec["layer"]
    return float(spec["tokens"] * spec["sequences"] * layers * draws)
