"""Does it matter downstream? A causal language model with its attention swapped.

docs/experiments.md#language-model. Two kinds of job: ``perplexity`` (held-out text, a method in
every layer or in one layer at a time) and ``passkey`` (recall of a planted number), on the
packaged SmolLM2-135M (rfbench.compute.models.lm) with every method of the attention study,
exact and uniform attention as the two ends (rfbench.compute.experiments.attention.lm.runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rfbench.compute.experiments import ConfigError, Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.attention.lm import data, passkey, study
from rfbench.compute.experiments.attention.lm.methods import EXACT, UNIFORM
from rfbench.compute.experiments.attention.lm.params import Params
from rfbench.compute.models import lm


@register_experiment
class LanguageModel(Experiment):
    """A causal LM's perplexity and passkey recall with its softmax attention replaced."""

    name = "lm"
    description = (
        "Downstream: a causal language model (SmolLM2-135M) with its attention replaced by each "
        "method: held-out perplexity (every layer, one layer at a time) and passkey recall."
    )
    tagline = "A causal LM's perplexity and passkey recall after the attention swap."
    params = Params
    profiles = {
        "quick": {"tokens": 64, "sequences": 1, "fit_tokens": 32, "budget": [16],
                  "estimators": ["positive@orf", "hedgehog", "positive@fitted", "window",
                                 "window+positive@orf", "top-k"],
                  "draws": 2, "per_layer": ["positive@orf"], "per_layer_budget": 16,
                  "layers": [0, 29], "head_layers": [0], "passkey_lengths": [128, 192],
                  "passkey_trials": 2,
                  "passkey_budget": 16},
        "paper": {},
    }  # fmt: skip
    memory_parameters = ("tokens",)
    spec_only = True

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """The decoder's weights and one sequence's states (sized from the model's config,
        before its weights are read), a few dense T × T float64 matrices per head (window+map),
        the fitting passes' queries and keys (data.fit_memory)."""
        t = max([config["tokens"], *config["passkey_lengths"]])
        fitting = data.fit_memory(config["model"], config["fit_tokens"])
        return lm.lm_memory(config["model"], t) + 8 * 16 * t * t + fitting

    def validate_config(self, config: Mapping[str, Any]) -> None:
        model = config["model"]
        lm.entry(model)  # an unknown name: one line
        spec = lm.lm_config(model)
        data.held_out(model, config["tokens"], config["sequences"])  # long enough (one line)
        data.fitting(model, config["fit_tokens"])
        for length in config["passkey_lengths"]:
            if length > spec["context"]:
                raise ConfigError.bad_value(
                    "passkey_lengths", length, f"at most the model's {spec['context']} positions"
                )
            passkey.make(lambda s: lm.encode(model, s), length, np.random.default_rng(0))
        if config["tokens"] > spec["context"]:
            raise ConfigError.bad_value("tokens", config["tokens"], f"≤ {spec['context']}")
        for f in config["budget"]:
            study.check_methods(config["estimators"], [f], config["sinks"], "budget")
        study.check_methods(config["per_layer"], [config["per_layer_budget"]], config["sinks"],
                      "per_layer_budget")  # fmt: skip
        if config["passkey_lengths"]:
            study.check_methods(config["estimators"], [config["passkey_budget"]], config["sinks"],
                          "passkey_budget")  # fmt: skip
        for option in ("layers", "head_layers"):
            bad = [x for x in config[option] if x >= spec["layers"]]
            if bad:
                raise ConfigError.bad_value(option, bad, f"layers 0..{spec['layers'] - 1}")

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        model = config["model"]
        spec = lm.lm_config(model)
        seqs = data.held_out(model, config["tokens"], config["sequences"])
        for ids in seqs:  # the exact passes once, up front (converting the model if needed)
            data.exact_pass(model, ids)
        fit = data.fit_keys(config["fit_tokens"], config["tokens"])
        common = {"model": model, "tokens": config["tokens"], "sequences": config["sequences"],
                  "sinks": config["sinks"], "draws": config["draws"],
                  **fit}  # fmt: skip
        jobs = [
            JobSpec(common, kind="perplexity", estimator=e, budget=0, layer=None)
            for e in (EXACT, UNIFORM)
        ]
        jobs += [
            JobSpec(common, kind="perplexity", estimator=e, budget=f, layer=None)
            for e in config["estimators"]
            for f in config["budget"]
        ]
        layers = config["layers"] or list(range(spec["layers"]))
        jobs += [
            JobSpec(common, kind="perplexity", estimator=e, budget=f, layer=layer)
            for layer in layers
            for e, f in [(UNIFORM, 0)]
            + [(e, config["per_layer_budget"]) for e in config["per_layer"]]  # fmt: skip
        ]
        heads = {"model": model, "tokens": config["tokens"], "sinks": config["sinks"],
                 "draws": max(config["draws"], 2), **fit,
                 "estimators": tuple(config["estimators"]), "significance": 2.0,
                 "matrix_rows": 128}  # fmt: skip
        jobs += [
            JobSpec(heads, kind="heads", layer=layer, budget=f)
            for layer in config["head_layers"]
            for f in config["budget"]
        ]
        probe = {"model": model, "trials": config["passkey_trials"], "sinks": config["sinks"],
                 **fit}  # fmt: skip
        jobs += [
            JobSpec(probe, kind="passkey", tokens=length, estimator=e, budget=f)
            for length in config["passkey_lengths"]
            for e, f in [(EXACT, 0), (UNIFORM, 0)]
            + [(e, config["passkey_budget"]) for e in config["estimators"]]
        ]
        return jobs

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        return study.run_job(spec, rng)

    def job_cost(self, spec: JobSpec) -> float | None:
        """Token-layers computed (study.job_cost)."""
        return study.job_cost(spec)
