"""Real attention: a pretrained transformer's heads, attention-level errors and honest baselines.

docs/experiments.md#attention. The heads are every layer's per-head scaled queries, keys and values
of all-MiniLM-L6-v2 (or any BERT-family folder, ``--model``) on the first ``tokens`` tokens of the
GPL-3 text, or the user's own Q, K, V (``--data qkv.npz``;
rfbench.compute.experiments.attention.data).

Three kinds of job:

- ``heads`` (per tokens, layer, m): every estimator on every head, ``draws`` independent draws
  each. Per draw the errors of rfbench.compute.experiments.attention.metrics.draw_metrics; rows give
  the
  mean and its standard error std/√draws. Estimators of one coupling draw from the same generator
  state, so where their draws hold the same projections (checked, not assumed) the per-draw
  difference to the coupling's first estimator is reported (``out_rel_frob_diff``, paired SE).
  Each ``out_rel_frob`` row says whether the estimator beats uniform attention: a one-sided
  z-test of its mean error against uniform attention's (deterministic) error,
  z = (u − mean)/SE > ``significance``.
- ``baselines`` (per tokens, layer): uniform attention (every output row the mean of V), the zero
  output (relative error 1) and the best rank-r approximation A_r of A for r = m and 2m (feature
  widths of one- and two-output components): ‖A_r − A‖_F/‖A‖_F is a lower bound on
  ``attn_rel_frob`` of every estimator with at most r features (Eckart–Young; ``bound`` column);
  plus each head's exact attention entropy and Q/K statistics.
- ``swap`` (per estimator, swap m): every layer's softmax attention replaced by the estimator's
  (fresh draws per trial, one draw per layer and head shared by all sentences of a trial), in
  float32; per trial the mean cosine between swapped and exact sentence embeddings and the
  Spearman correlation of the pairwise similarities (rfbench.compute.experiments.attention.swap).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from rfbench.compute import models
from rfbench.compute.experiments import ConfigError, Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.attention import causal_rows
from rfbench.compute.experiments.attention import data as source
from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.experiments.attention.params import Params
from rfbench.compute.experiments.chunks import CHUNK_BYTES, chunks
from rfbench.compute.features import registry
from rfbench.compute.features.base import Draw, Estimator
from rfbench.compute.models import texts
from rfbench.compute.results import BOOL, FLOAT, INT, STRING, register_metric, register_parameter

for _name, _text in (
    ("out_rel_frob", "‖Ô - O‖_F/‖O‖_F, attention output O = D⁻¹AV, Ô = D̂⁻¹ÂV"),
    ("out_rel_spec", "‖Ô - O‖₂/‖O‖₂ (spectral norm), attention output"),
    ("attn_rel_frob", "‖Â - A‖_F/‖A‖_F, A = K row-normalised (attention)"),
    ("attn_kl", "mean row KL(A_i‖Â_i) over rows where Â_i is a positive distribution"),
    ("kl_rows", "fraction of rows where Â_i is a positive distribution (attn_kl defined)"),
    ("bad_normaliser", "fraction of rows whose normaliser D̂_ii is ≤ 0 or not finite"),
    ("out_rel_frob_diff", "out_rel_frob minus the reference estimator's on the same draws"),
    ("attn_entropy", "mean row entropy of the exact attention (nats; log S = uniform)"),
    ("max_logit", "max qᵀk of a head (q, k scaled so qᵀk is the logit)"),
    ("swap_cosine", "mean cosine of swapped vs exact sentence embeddings"),
    ("swap_spearman", "Spearman correlation of pairwise similarities, swapped vs exact"),
    ("swap_nonfinite", "fraction of sentences whose swapped embedding is not finite"),
):
    register_metric(_name, _text)
for _side in ("q", "k"):
    for _stat in ("q50", "q95", "max"):
        register_metric(f"{_side}_norm_{_stat}", f"{_stat} of the row norms of {_side} (scaled)")
    register_metric(f"{_side}_anisotropy", f"top eigenvalue / trace of {_side}ᵀ{_side}")
for _name, _kind in (
    ("layer", INT),
    ("head", INT),
    ("tokens", INT),
    ("rank", INT),
    ("features", INT),
    ("reference", STRING),
    ("kind", STRING),
    ("bound", BOOL),
    ("sentences", INT),
):
    register_parameter(_name, _kind)
for _name, _kind in (("z_uniform", FLOAT), ("beats_uniform", BOOL)):  # from the row's value
    register_parameter(_name, _kind, derived=True)

_FAILURES = (ValueError, ArithmeticError, NotImplementedError)
_PER_DRAW = ("out_rel_frob", "out_rel_spec", "attn_rel_frob", "attn_kl", "kl_rows",
             "bad_normaliser")  # fmt: skip


def _coupling(name: str) -> str:
    return registry.describe(name).weights or name


def _seed_for(base: int, key: str) -> np.random.Generator:
    """A generator shared by every estimator of one coupling (same key → same stream)."""
    return np.random.default_rng([base, zlib.crc32(key.encode())])


def _mean_se(values: np.ndarray) -> tuple[float, float | None, int, str | None]:
    """Mean, standard error and count of the finite values; a note when some are not.

    Parameters
    ----------
    values : ndarray, shape (draws,)

    Returns
    -------
    (mean, stderr or None, count, note or None)
    """
    ok = np.isfinite(values)
    v = values[ok]
    note = None if ok.all() else f"{int((~ok).sum())} of {values.size} draws not finite"
    if v.size == 0:  # nan: undefined in every draw (attn_kl); inf: diverged in every draw
        return float("nan" if np.isnan(values).all() else "inf"), None, 0, note
    se = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else None
    return float(v.mean()), se, int(v.size), note


@register_experiment
class Attention(Experiment):
    """Attention-level errors of random features on a pretrained transformer's heads."""

    name = "attention"
    description = (
        "Real attention: output error D̂⁻¹ÂV vs D⁻¹AV, normaliser failures, uniform/zero/rank-r "
        "baselines and a swap-in embedding score on all-MiniLM-L6-v2 (or --model, --data)."
    )
    tagline = "Real attention heads of a pretrained transformer vs estimators and baselines."
    params = Params
    profiles = {
        "quick": {"tokens": [128], "m": [16, 64], "draws": 6, "swap_sentences": 40,
                  "swap_trials": 2},
        "paper": {},
    }  # fmt: skip
    memory_parameters = ("tokens", "m", "swap_sentences")

    # ------------------------------------------------------------------ configuration

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """The model's weights (sized from its safetensors header: the file's arrays and a
        float64 and a float32 copy), its activations, a few T × T matrices and chunks of draws;
        T is clamped to the model's positions."""
        t, big_m = max(config["tokens"]), max(config["m"] + config["swap_m"])
        model = 0
        if not config["data"]:
            spec = models.check_model(config["model"])
            t = min(t, spec.max_positions)
            forward = 3 * spec.layers * t * spec.hidden + 4 * t * (spec.hidden + spec.intermediate)
            model = spec.load_bytes() + 8 * forward
        return model + 4 * CHUNK_BYTES + 8 * (12 * t * t + 8 * t * big_m)

    def validate_config(self, config: Mapping[str, Any]) -> None:
        causal_rows.validate(config)  # --causal: as many keys as queries
        if config["swap_sentences"] > len(texts.sentences()):
            raise ConfigError.bad_value(
                "swap_sentences", config["swap_sentences"], f"at most {len(texts.sentences())}"
            )
        for name in config["estimators"]:
            try:
                registry.get(name, kernel="softmax", m=1)
            except registry.UnknownEstimatorError as exc:
                raise ConfigError(str(exc)) from None
            except _FAILURES as exc:
                raise ConfigError.bad_value(
                    "estimators", name, f"a softmax estimator ({exc})"
                ) from None
        if config["data"]:
            if config["model"]:
                raise ConfigError("--data replaces the model: give --model or --data, not both")
            source.load_qkv(config["data"])  # one DataError line if unusable
            return
        # the model folder, checked without reading its weights: config against the weights'
        # header, the tokenizer on the texts of this run (one ModelError line each)
        samples = [texts.text(source.TEXT)]
        if config["swap"]:
            samples += texts.sentences()[: config["swap_sentences"]]
        spec = models.check_model(config["model"], samples)
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

    @staticmethod
    def _shape(config: Mapping[str, Any], tokens: int) -> tuple[int, int, int, int]:
        return source.shape(config["model"], config["data"], tokens)

    def cache_context(self, config: Mapping[str, Any]) -> Mapping[str, Any]:
        return {}  # run_job reads only its spec (which names the model by its sha256)

    # ------------------------------------------------------------------ grid

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        data, model = config["data"], config["model"]
        label = data or models.model_label(model)
        common = {"model": model, "data": data, "dataset": label, "max_heads": config["max_heads"]}
        common.update(causal_rows.point(config, label))  # --causal: causal, dataset label
        if data:
            layers, tokens_list = [0], {0: 0}
        else:
            spec = models.check_model(model)
            layers = config["layers"] or list(range(spec.layers))
            tokens_list = _clamped(config["tokens"], spec.max_positions)
        jobs = []
        for tokens, asked in tokens_list.items():
            self._shape(config, tokens)  # extract (and cache) the activations once, up front
            clamp = {"clamped_from": asked} if asked != tokens else {}
            for layer in layers:
                point = {**common, "tokens": tokens, "layer": layer, **clamp}
                jobs.append(JobSpec(point, kind="baselines", m=tuple(config["m"])))
                jobs += [
                    JobSpec(point, kind="heads", m=m, estimators=tuple(config["estimators"]),
                            draws=config["draws"], significance=config["significance"],
                            matrix_rows=config["matrix_rows"])
                    for m in config["m"]
                ]  # fmt: skip
        if config["swap"] and not data:
            from rfbench.compute.experiments.attention.swap import exact

            swap_tokens = min(config["swap_tokens"], spec.max_positions)
            exact(model, config["swap_sentences"], swap_tokens, config["causal"])  # once, up front
            swap = {"model": model, "dataset": label, "kind": "swap",
                    "sentences": config["swap_sentences"], "trials": config["swap_trials"],
                    "tokens": swap_tokens}  # fmt: skip
            swap.update(causal_rows.point(config, label))  # --causal: causal, dataset label
            jobs += [
                JobSpec(swap, estimator=e, m=m)
                for e in ["uniform", *config["estimators"]]
                for m in (config["swap_m"] if e != "uniform" else [0])
            ]
        return jobs

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        if spec["kind"] == "swap":
            from rfbench.compute.experiments.attention import swap

            return swap.run(spec, rng)
        q, k, v = source.heads(spec["model"], spec["data"], spec["tokens"], spec["layer"])
        n_heads = q.shape[0] if not spec["max_heads"] else min(spec["max_heads"], q.shape[0])
        base = {"kind": spec["kind"], "dataset": spec["dataset"], "layer": spec["layer"],
                "tokens": q.shape[1], "d": q.shape[2], "kernel": "softmax"}  # fmt: skip
        # --causal: the causal column, baselines and per-draw forms (causal_rows)
        causal = spec.get("causal", False)
        base.update({"causal": True} if causal else {})
        baseline_rows = causal_rows.baseline_rows if causal else _baseline_rows
        forms = causal_rows.FORMS if causal else am
        rows: list[dict[str, Any]] = []
        if spec["kind"] == "baselines":
            for h in range(n_heads):
                rows += baseline_rows({**base, "head": h}, q[h], k[h], v[h], list(spec["m"]))
        else:
            rows = _head_rows(spec, base, q[:n_heads], k[:n_heads], v[:n_heads], rng, forms)
        if "clamped_from" in spec:
            why = f"tokens {spec['clamped_from']} clamped to the model's {spec['tokens']} positions"
            for row in rows:
                row["note"] = f"{row['note']}; {why}" if row.get("note") else why
        return rows

    def job_cost(self, spec: JobSpec) -> float | None:
        """Longest-first scheduling, in units calibrated on the paper profile (CPU seconds ×
        ~2·10⁶): a heads job ≈ T(50 + m)·draws·estimators (T = 512, m = 256: ~9 s), the baselines
        ≈ 10T² (SVDs), a swap job ≈ 400 · sentences · tokens · trials (200 × 64 × 3: ~8 s; one
        trial for uniform attention and deterministic maps). None for the user's own heads."""
        if spec["kind"] == "swap":
            name = spec["estimator"]
            once = name == "uniform" or registry.get(name, kernel="softmax", m=1).deterministic
            return 400.0 * spec["sentences"] * spec["tokens"] * (1 if once else spec["trials"])
        t = spec["tokens"]
        if not t:
            return None
        if spec["kind"] == "baselines":
            return 10.0 * t * t
        return float(t * (50 + spec["m"]) * spec["draws"] * len(spec["estimators"]))


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


def _baseline_rows(
    base: dict[str, Any], q: np.ndarray, k: np.ndarray, v: np.ndarray, ms: list[int]
) -> list[dict[str, Any]]:
    """Uniform, zero and best-rank baselines of one head plus its statistics."""
    truth = am.HeadTruth.of(q, k, v)
    t, s = truth.A.shape
    rows = []

    def row(estimator: str, metric: str, value: float, **extra: Any) -> None:
        rows.append({**base, "estimator": estimator, "metric": metric, "value": float(value),
                     "stderr": None, "n_trials": 0, **extra})  # fmt: skip

    errs = am.output_errors(truth, am.uniform_output(v, t)[None])
    for metric, value in errs.items():
        row("uniform", metric, value[0])
    uniform = np.full((t, s), 1.0 / s)
    row("uniform", "attn_rel_frob", np.linalg.norm(uniform - truth.A) / np.linalg.norm(truth.A))
    row("uniform", "attn_kl", np.mean(np.log(s) + np.sum(truth.A * truth.log_A, axis=1)))
    row("zero", "out_rel_frob", 1.0)
    row("zero", "out_rel_spec", 1.0)
    ranks = sorted({r for m in ms for r in (m, 2 * m)})
    norm_a = np.linalg.norm(truth.A)
    for r, A_r in am.best_rank(truth.A, ranks).items():
        note = "oracle: best rank-r approximation of A (a lower bound for ≤ r features)"
        row("best-rank", "attn_rel_frob", np.linalg.norm(A_r - truth.A) / norm_a, rank=r,
            bound=True, note=note)  # fmt: skip
        out = am.output_errors(truth, (A_r @ v)[None])
        for metric, value in out.items():
            row("best-rank", metric, value[0], rank=r, bound=False,
                note="oracle: A_r V (not a bound on output errors)")  # fmt: skip
    for metric, value in am.head_statistics(q, k, truth).items():
        row("exact", metric, value)
    return rows


def _draw_bytes(r: int, s: int, t: int, features: int) -> int:
    return 8 * (8 * r * s + 3 * (t + s) * features)


def _head_rows(
    spec: JobSpec,
    base: dict[str, Any],
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    rng: np.random.Generator,
    am: Any = am,
) -> list[dict[str, Any]]:
    """Every estimator on every head of one layer at one m (see the module docstring); ``am``
    holds the per-draw forms: rfbench.compute.experiments.attention.metrics, or their causal
    forms."""
    m, draws = spec["m"], spec["draws"]
    seed = int(rng.integers(2**63))
    heads, t, d = q.shape
    s = k.shape[1]
    truths = [am.HeadTruth.of(q[h], k[h], v[h]) for h in range(heads)]
    rows = am.matrix_rows(t, spec["matrix_rows"])
    uniform = [
        am.output_errors(tr, am.uniform_output(v[h], t)[None])["out_rel_frob"][0]
        for h, tr in enumerate(truths)
    ]
    per_draw: dict[str, list[dict[str, np.ndarray]]] = {}
    first_proj: dict[str, np.ndarray] = {}
    failures: dict[str, str] = {}
    widths: dict[str, int] = {}
    for name in spec["estimators"]:
        try:
            est = registry.get(name, kernel="softmax", m=m)
            gen = _seed_for(seed, _coupling(name))  # same stream for one coupling: paired draws
            heads_metrics = []
            for h in range(heads):
                parts: dict[str, list[np.ndarray]] = {key: [] for key in _PER_DRAW}
                # a deterministic map (taylor2) has the same metrics in every draw: one, repeated
                spans = (
                    [(0, 1)]
                    if est.deterministic
                    else chunks(draws, _draw_bytes(len(rows), s, t, 4 * m), share=0.0)
                )
                for start, stop in spans:
                    draw = est.sample(gen, d=d, draws=stop - start, fit=(q[h], k[h]))
                    if h == 0 and start == 0:
                        proj = next(iter(draw.projections.values()))
                        first_proj[name] = proj.W
                        widths[name] = _width(est, draw, q[h])
                    estimate = am.estimate_head(est, draw, q[h], k[h], v[h], rows)
                    for key, value in am.draw_metrics(truths[h], estimate).items():
                        parts[key].append(value)
                per_head = {key: np.concatenate(val) for key, val in parts.items()}
                if est.deterministic:
                    per_head = {key: np.repeat(val, draws) for key, val in per_head.items()}
                heads_metrics.append(per_head)
            per_draw[name] = heads_metrics
        except _FAILURES as exc:
            failures[name] = f"{type(exc).__name__}: {exc}"
    rows: list[dict[str, Any]] = []
    common = {**base, "m": m}
    for name, why in failures.items():
        rows.append({**common, "estimator": name, "metric": "skipped", "value": 1.0,
                     "stderr": None, "n_trials": 0, "note": why})  # fmt: skip
    references: dict[str, str] = {}
    for name in per_draw:
        references.setdefault(_coupling(name), name)
    for name, heads_metrics in per_draw.items():
        ref = references[_coupling(name)]
        paired = ref != name and np.array_equal(first_proj[name], first_proj[ref])
        for h, metrics in enumerate(heads_metrics):
            row0 = {**common, "estimator": name, "head": h, "features": widths.get(name)}
            for key, values in metrics.items():
                value, se, n, note = _mean_se(values)
                if np.isnan(value):
                    continue  # undefined in every draw (attn_kl; kl_rows = 0 says so)
                row = {**row0, "metric": key, "value": value, "stderr": se, "n_trials": n,
                       "note": note}  # fmt: skip
                if key == "out_rel_frob":
                    z = _z(uniform[h], values)
                    row.update(z_uniform=z, beats_uniform=bool(z > spec["significance"]))
                rows.append(row)
            if paired:
                diff = metrics["out_rel_frob"] - per_draw[ref][h]["out_rel_frob"]
                value, se, n, note = _mean_se(diff)
                rows.append({**row0, "metric": "out_rel_frob_diff", "value": value, "stderr": se,
                             "n_trials": n, "note": note, "reference": ref})  # fmt: skip
    return rows


def _width(est: Estimator, draw: Draw, x: np.ndarray) -> int:
    """Real feature width of the estimator (complex maps count twice)."""
    vals = est.query_log_features(draw, x[:1]).values
    return int(vals.shape[-1] * (2 if np.iscomplexobj(vals) else 1))


def _z(uniform: float, values: np.ndarray) -> float:
    """(uniform − mean)/SE of per-draw errors; −inf if any draw is not finite, ±inf if SE = 0."""
    if not np.isfinite(values).all():
        return float("-inf")
    se = values.std(ddof=1) / np.sqrt(values.size)
    diff = uniform - values.mean()
    if se == 0:
        return float(np.sign(diff) * np.inf) if diff else 0.0
    return float(diff / se)


__all__ = ["Attention"]
