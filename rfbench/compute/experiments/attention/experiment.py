"""Real attention: a pretrained transformer's heads, attention-level errors and honest baselines.

docs/experiments.md#attention. Three kinds of job: ``heads`` (every estimator on every head of
one layer at one feature budget) and ``baselines`` (uniform, zero and best rank-r attention;
rfbench.compute.experiments.attention.heads), and ``swap`` (the swap-in embedding score;
rfbench.compute.experiments.attention.swap).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rfbench.compute import models
from rfbench.compute.experiments import (
    ConfigError,
    DataFile,
    Experiment,
    JobSpec,
    register_experiment,
)
from rfbench.compute.experiments.attention import budget, heldout
from rfbench.compute.experiments.attention import data as source
from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.experiments.attention.causal import FORMS as CAUSAL_FORMS
from rfbench.compute.experiments.attention.heads import FAILURES, baseline_rows, head_rows
from rfbench.compute.experiments.attention.lm import study
from rfbench.compute.experiments.attention.local import LocalMethod, is_local
from rfbench.compute.experiments.attention.params import Params
from rfbench.compute.experiments.chunks import CHUNK_BYTES
from rfbench.compute.features import registry
from rfbench.compute.features.base import Estimator
from rfbench.compute.models import texts


@register_experiment
class Attention(Experiment):
    """Attention-level errors of random features on a pretrained transformer's heads."""

    name = "attention"
    # each method draws from its own keyed substream (heads._feature_map)
    unkeyed = ("estimators",)
    description = (
        "Real attention: output error D̂⁻¹ÂV vs D⁻¹AV, normaliser failures, uniform/zero/rank-r "
        "baselines and a swap-in embedding score on all-MiniLM-L6-v2 (or --model, --data)."
    )
    tagline = "Real attention heads of a pretrained transformer vs estimators and baselines."
    params = Params
    profiles = {
        "quick": {"tokens": [128], "budget": [16, 64], "draws": 6, "max_heads": 4,
                  "swap_sentences": 40, "swap_trials": 2, "fit_tokens": 512},
        "paper": {},
    }  # fmt: skip
    data_file = DataFile(own_help=True)
    memory_parameters = ("tokens", "budget", "swap_sentences")
    spec_only = True  # a job's spec names the model by its sha256

    # ------------------------------------------------------------------ configuration

    def profile_values(self, profile: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """The profile's overrides; for a causal language model the quick profile also takes
        study.QUICK (one layer, one budget: seconds)."""
        own = super().profile_values(profile, params)
        if profile == "quick" and study.is_lm(params.get("model", "")):
            return {**own, **study.QUICK}
        return own

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """The model's weights (sized from its safetensors header: the file's arrays and a
        float64 and a float32 copy), its activations, one layer's fitting heads (the whole
        fitting text), a few T × T matrices and chunks of draws;
        T is clamped to the model's positions. With ``--data``, T is the file's own token count
        (from its .npz headers, checked against the budget there: data.check_size). A causal
        language model: study.peak_memory."""
        if study.is_lm(config["model"]):
            return study.peak_memory(config)
        t, big_m = max(config["tokens"]), max(config["budget"] + config["swap_budget"])
        model = 0
        if config["data"]:  # the file's own tokens, from its headers (nothing read yet)
            t = max(source.check_size(config["data"]))
        else:
            spec = models.check_model(config["model"])
            t = min(t, spec.max_positions)
            forward = 3 * spec.layers * t * spec.hidden + 4 * t * (spec.hidden + spec.intermediate)
            # one layer's fitting queries and keys: the fitting text's tokens (English runs
            # about 5 characters a token in these tokenizers; 4 leaves room)
            fitting = config["fit_tokens"] or len(texts.text(source.TEXT)) // 4
            model = spec.load_bytes() + 8 * forward + 16 * spec.hidden * fitting
        return model + 4 * CHUNK_BYTES + 8 * (12 * t * t + 8 * t * big_m)

    def validate_config(self, config: Mapping[str, Any]) -> None:
        if study.is_lm(config["model"]):  # a decoder: its heads and its perplexity
            study.validate(config)
            return
        if config["swap_sentences"] > len(texts.sentences()):
            raise ConfigError.bad_value(
                "swap_sentences", config["swap_sentences"], f"at most {len(texts.sentences())}"
            )
        for name in config["estimators"]:
            local = LocalMethod.parse(name)
            if local is not None and not local.oracle and config["sinks"]:
                keys = min(local.keys(f, config["window"]) for f in config["budget"])
                if config["sinks"] >= keys:  # the sinks are among a window's keys
                    raise ConfigError.bad_value(
                        "sinks", config["sinks"], f"fewer than {name}'s {keys} exact keys"
                    )
            if local is not None and local.feature_map is None:
                continue
            est = _softmax(local.feature_map if local is not None else name, "estimators")
            for features in config["budget"] + (config["swap_budget"] if not local else []):
                keys = local.keys(features, config["window"]) if local else 0
                per = budget.features_per_projection(est)
                if features - keys < 1 or budget.projections(est, features - keys) < 1:
                    if local and config["window"] and features > per:  # --window took it all
                        raise ConfigError.bad_value(
                            "window", config["window"],
                            f"at most {features - per} for {name} at budget {features} (its "
                            f"map needs {per} of the F = {features} features)",
                        )  # fmt: skip
                    raise ConfigError.bad_value(
                        "budget", features,
                        f"at least {per + keys} for {name} ({per} features per projection)",
                    )  # fmt: skip
        for name in config["swap_per_layer"]:
            if is_local(name):
                raise ConfigError.bad_value("swap_per_layer", name, "a feature map (registry)")
            est = _softmax(name, "swap_per_layer")
            if min(budget.projections(est, f) for f in config["swap_budget"]) < 1:
                raise ConfigError.bad_value(
                    "swap_budget", config["swap_budget"],
                    f"at least {budget.features_per_projection(est)} features for {name}",
                )  # fmt: skip
        if config["data"]:
            if config["model"]:
                raise ConfigError("--data replaces the model: give --model or --data, not both")
            q, k, _ = source.load_qkv(config["data"])  # one DataError line if unusable
            if config["causal"] and q.shape[1] != k.shape[1]:
                raise ConfigError(
                    f"--causal needs as many keys as queries: {config['data']} has {q.shape[1]} "
                    f"queries and {k.shape[1]} keys per head"
                )
            _check_window(config, heldout.measured(k.shape[1]))
            return
        # the model folder, checked without reading its weights: config against the weights'
        # header, the tokenizer on the texts of this run (one ModelError line each)
        samples = [texts.text(source.TEXT), texts.text(source.HELD_OUT)]
        if config["swap"]:
            samples += texts.sentences()[: config["swap_sentences"]]
        spec = models.check_model(config["model"], samples)
        _check_window(config, min(min(config["tokens"]), spec.max_positions))
        bad = [x for x in config["layers"] if x >= spec.layers]
        if bad:
            raise ConfigError.bad_value("layers", bad, f"layers 0..{spec.layers - 1} of the model")
        if not config["layers"]:
            config["layers"] = list(range(spec.layers))  # the resolved config names what runs

    def begin_run(self, force: bool) -> None:
        """``--force`` computes the model's activations and embeddings again (once per run)."""
        from rfbench.compute.experiments.attention import swap

        models.recompute(force)
        if force:
            swap.clear_cache()
            source.load_qkv.cache_clear()

    # ------------------------------------------------------------------ grid

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        if study.is_lm(config["model"]):
            return study.grid(config)
        data, model = config["data"], config["model"]
        label = data or models.model_label(model)
        common = {"model": model, "data": data, "dataset": label, "max_heads": config["max_heads"]}
        # --causal: the causal column and its own dataset label (bidirectional keys unchanged)
        causal = {"causal": True, "dataset": f"{label}+causal"} if config["causal"] else {}
        common.update(causal)
        if data:
            layers, tokens_list = [0], {0: 0}
        else:
            spec = models.check_model(model)
            layers = config["layers"] or list(range(spec.layers))
            tokens_list = _clamped(config["tokens"], spec.max_positions)
        # stop = resolved: the heads jobs draw in batches (heads._until_resolved), knowing how
        # many layers the report's Holm family spans; fixed jobs keep their spec, so their keys
        # and streams are unchanged
        sequential = (
            {"stop": "resolved", "batch": config["batch"], "family_layers": len(layers)}
            if config["stop"] == "resolved"
            else {}
        )
        jobs = []
        fit = {"fit_tokens": config["fit_tokens"]} if config["fit_tokens"] and not data else {}
        # attention sinks: in the spec only when asked for (a plain window's jobs keep their keys)
        sinks = {"sinks": config["sinks"]} if config["sinks"] else {}
        for tokens, asked in tokens_list.items():
            # extract (and cache) the activations once
            source.shape(model, data, tokens, config["fit_tokens"], _fits(config["estimators"]))
            clamp = {"clamped_from": asked} if asked != tokens else {}
            for layer in layers:
                point = {**common, "tokens": tokens, "layer": layer, **clamp}
                jobs.append(JobSpec(point, kind="baselines", budget=tuple(config["budget"]),
                                    matrix_rows=config["matrix_rows"]))  # fmt: skip
                jobs += [
                    JobSpec(point, kind="heads", budget=f, **fit,
                            estimators=tuple(config["estimators"]), draws=config["draws"],
                            significance=config["significance"],
                            matrix_rows=config["matrix_rows"], window=config["window"],
                            **sinks, **sequential)
                    for f in config["budget"]
                ]  # fmt: skip
        if config["swap"] and not data:
            from rfbench.compute.experiments.attention.swap import exact

            swap_tokens = min(config["swap_tokens"], spec.max_positions)
            exact(model, config["swap_sentences"], swap_tokens, config["causal"])  # once, up front
            swap = {"model": model, "dataset": label, "kind": "swap",
                    "sentences": config["swap_sentences"], "trials": config["swap_trials"],
                    "tokens": swap_tokens}  # fmt: skip
            swap.update(causal)
            maps = [e for e in config["estimators"] if not is_local(e)]  # swap-in: maps only
            jobs += [
                JobSpec(swap, estimator=e, budget=f)
                for e in ["uniform", *maps]
                for f in (config["swap_budget"] if e != "uniform" else [0])
            ]
            per_layer = config["swap_per_layer"]
            jobs += [
                JobSpec(swap, estimator=e, budget=f, layer=layer)
                for e in (["uniform", *per_layer] if per_layer else [])
                for f in (config["swap_budget"] if e != "uniform" else [0])
                for layer in range(spec.layers)
            ]
        return jobs

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        if study.is_lm(spec.get("model", "")):
            return study.run_job(spec, rng)
        if spec["kind"] == "swap":
            from rfbench.compute.experiments.attention import swap

            return swap.run(spec, rng)
        fitting = spec["kind"] == "heads" and _fits(spec["estimators"])
        part = heldout.split(spec["model"], spec["data"], spec["tokens"], spec["layer"],
                             spec.get("fit_tokens", 0), fitting)  # fmt: skip
        q, k, v = part.q, part.k, part.v
        n_heads = q.shape[0] if not spec["max_heads"] else min(spec["max_heads"], q.shape[0])
        base = {"kind": spec["kind"], "dataset": spec["dataset"], "layer": spec["layer"],
                "tokens": q.shape[1], "d": q.shape[2], "kernel": "softmax",
                **part.columns}  # fmt: skip
        # --causal: the causal column, baselines and per-draw forms (attention.causal)
        causal = spec.get("causal", False)
        base.update({"causal": True} if causal else {})
        forms = CAUSAL_FORMS if causal else am
        rows: list[dict[str, Any]] = []
        if spec["kind"] == "baselines":
            measured = am.matrix_rows(q.shape[1], spec["matrix_rows"])
            for h in range(n_heads):
                rows += baseline_rows(
                    {**base, "head": h}, q[h], k[h], v[h], list(spec["budget"]), measured, forms
                )
        else:
            rows = head_rows(spec, base, q[:n_heads], k[:n_heads], v[:n_heads], rng,
                             heldout.Fitter(part, causal), forms)  # fmt: skip
        if "clamped_from" in spec:
            why = f"tokens {spec['clamped_from']} clamped to the model's {spec['tokens']} positions"
            for row in rows:
                row["note"] = f"{row['note']}; {why}" if row.get("note") else why
        return rows

    def job_cost(self, spec: JobSpec) -> float | None:
        """Longest-first scheduling, in units calibrated on the paper profile (CPU seconds ×
        ~2·10⁶): a heads job ≈ T(50 + F)·draws per map (T = 512, F = 256, 11 maps: ~8 s), T²
        per deterministic local method and T(T + F)·draws per window+map, the baselines ≈ 10T²
        (SVDs), a swap job ≈ 400 · sentences · tokens · trials (200 × 64 × 3: ~8 s; one trial
        for uniform attention and deterministic maps). None for the user's own heads; a causal
        language model's jobs: study.job_cost."""
        if study.is_lm(spec.get("model", "")):
            return study.job_cost(spec)
        if spec["kind"] == "swap":
            name = spec["estimator"]
            once = name == "uniform" or registry.get(name, kernel="softmax", m=1).deterministic
            return 400.0 * spec["sentences"] * spec["tokens"] * (1 if once else spec["trials"])
        t = spec["tokens"]
        if not t:
            return None
        if spec["kind"] == "baselines":
            return 10.0 * t * t
        cost = 0.0
        for name in spec["estimators"]:
            local = LocalMethod.parse(name)
            if local is None:
                cost += t * (50 + spec["budget"]) * spec["draws"]
            elif local.feature_map is None:
                cost += t * t
            else:
                cost += t * (t + spec["budget"]) * spec["draws"]
        return cost


def _softmax(name: str, option: str) -> Estimator:
    """The softmax estimator ``name`` with one projection (an unknown or unusable name is one
    ConfigError line naming ``option``)."""
    try:
        return registry.get(name, kernel="softmax", m=1)
    except registry.UnknownEstimatorError as exc:
        raise ConfigError(str(exc)) from None
    except FAILURES as exc:
        raise ConfigError.bad_value(option, name, f"a softmax estimator ({exc})") from None


def _fits(names: Any) -> bool:
    """Whether any of the methods ``names`` is fitted to the fitting heads (a data-dependent
    estimator, alone or as a window's feature map)."""
    for name in names:
        local = LocalMethod.parse(name)
        name = local.feature_map if local is not None else name
        if name is not None and _softmax(name, "estimators").data_dependent:
            return True
    return False


def _clamped(tokens: list[int], positions: int) -> dict[int, int]:
    """Sequence length -> the length asked for: each of ``tokens`` clamped to the model's
    ``positions`` (the encoder truncates there anyway); where two meet, one asked exactly wins."""
    out: dict[int, int] = {}
    for t in tokens:
        if t <= positions:
            out[t] = t
        else:
            out.setdefault(positions, t)
    return out


def _check_window(config: Mapping[str, Any], shortest: int) -> None:
    """A window longer than the shortest sequence is a user error (one line, exit 2)."""
    if config["window"] > shortest:
        raise ConfigError.bad_value(
            "window", config["window"], f"at most the shortest sequence ({shortest} tokens)"
        )
