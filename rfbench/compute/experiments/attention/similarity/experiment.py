"""Does attention's approximation matter downstream? Encoders scored on human document similarity.

docs/experiments.md#similarity. The 50 documents of Lee et al. (2005) (``lee``) are embedded by
each encoder (mean pooling, L2-normalised, the model's own positions: no document is truncated)
with exact softmax attention, with uniform attention, and with each method of the attention study
in every layer (``methods``); the score is Spearman's correlation between the embeddings' cosine
similarities and the mean human ratings over the 1,225 pairs, with a bootstrap over documents for
its interval and for each method's paired differences to exact and uniform attention and its
share of the gap between them (``stats``).

An experiment of its own (``rfbench similarity``: its own parameters, both encoders in one run, no
heads measured) inside the attention study's package, whose methods, fitting text and fitted maps
it reuses (the import contract "no experiment imports another" holds between top-level packages).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from rfbench.compute import models
from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.attention import data as source
from rfbench.compute.experiments.attention.similarity import lee
from rfbench.compute.experiments.attention.similarity import stats as st
from rfbench.compute.experiments.attention.similarity.methods import Method
from rfbench.compute.experiments.attention.similarity.params import Params
from rfbench.compute.experiments.attention.swap import uniform_attention
from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.features import registry
from rfbench.compute.models import texts
from rfbench.compute.stats import mean_se

#: documents per forward pass: embed sorts them by length, so a batch pads little (one batch of
#: all 50 pads to the longest and costs about 1.5 times as much)
BATCH = 10
#: the two ends: exact softmax attention and uniform attention (the mean of the values)
EXACT, UNIFORM = "exact", "uniform"
#: metric -> what its rows hold
NOTES = {
    "human_spearman": "Spearman(cosine of the embeddings, mean human rating) over the document "
    "pairs; stderr over draws, ci over document resamples",
    "human_spearman_minus_exact": "Spearman minus exact attention's (paired: the same resamples)",
    "human_spearman_minus_uniform": "Spearman minus uniform attention's (paired)",
    "human_gap_recovered": "(ρ − ρ_uniform)/(ρ_exact − ρ_uniform): 0 = uniform, 1 = exact",
    "embedding_nonfinite": "share of documents whose swapped embedding is not finite (over draws)",
}


@register_experiment
class Similarity(Experiment):
    """Encoders with every layer's softmax replaced, scored on Lee (2005) human similarity."""

    name = "similarity"
    description = (
        "Downstream: Spearman correlation of an encoder's document similarities with human "
        "judgements (Lee et al., 2005, from the gensim wheel) with every method of the attention "
        "study swapped into every layer, between exact and uniform attention."
    )
    tagline = "Does it matter downstream? Encoders' agreement with human document similarity."
    params = Params
    profiles = {
        "quick": {"documents": 12, "draws": 2, "bootstrap": 200, "fit_tokens": 128,
                  "models": [models.DEFAULT_MODEL],
                  "methods": ["positive@iid", "positive@fitted", "hedgehog",
                              "window+positive@iid", "top-k"]},
        "paper": {},
    }  # fmt: skip
    spec_only = True
    memory_parameters = ("budget", "draws", "bootstrap")

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """The largest encoder's weights (from its safetensors header) and one batch's forward
        pass at the model's positions (hidden states, q/k/v, the feed-forward layer, one
        (T × T) logit matrix per head and every head's query and key features at the largest
        budget F, with every layer's projections), in float64; plus the draws' similarity
        matrices and the bootstrap's resamples, pair weights and weighted ranks."""
        n = config["documents"] or len(lee.load().documents)
        pairs, draws, resamples = n * (n - 1) // 2, config["draws"], config["bootstrap"]
        scores = resamples * (10 * pairs + 2 * n) + draws * (2 * n * n + resamples)
        peak = 0
        for model in config["models"]:
            spec = models.check_model(model)
            t = spec.max_positions
            forward = BATCH * t * (6 * spec.hidden + 2 * spec.intermediate + spec.heads * t)
            features = max(config["budget"]) * (
                spec.layers * spec.hidden + 4 * BATCH * spec.heads * t
            )
            peak = max(peak, spec.load_bytes() + 8 * (forward + features))
        return peak + 8 * scores

    def validate_config(self, config: Mapping[str, Any]) -> None:
        data = lee.load()  # a missing wheel or a wrong file: one line (exit 2)
        if config["documents"] and not 3 <= config["documents"] <= len(data.documents):
            raise ConfigError.bad_value(
                "documents", config["documents"], f"0 (all) or 3..{len(data.documents)}"
            )
        for name in config["methods"]:
            if name in (EXACT, UNIFORM):
                raise ConfigError.bad_value(
                    "methods", name, "a method (exact and uniform always run)"
                )
            for f in config["budget"]:
                try:
                    Method(name, f)
                except registry.UnknownEstimatorError as exc:
                    raise ConfigError(str(exc)) from None
                except (ValueError, NotImplementedError) as exc:
                    raise ConfigError.bad_value("budget", f, str(exc)) from None
        samples = [texts.text(source.TEXT), *_documents(config["documents"])]
        for model in config["models"]:
            models.check_model(model, samples)  # one ModelError line each

    def begin_run(self, force: bool) -> None:
        """``--force`` computes the embeddings and fitting heads again."""
        models.recompute(force)
        if force:
            _ends.cache_clear()

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        jobs = []
        for model in config["models"]:
            spec = models.check_model(model)
            common = {"model": model, "dataset": models.model_label(model),
                      "documents": config["documents"], "bootstrap": config["bootstrap"],
                      "fit_tokens": min(config["fit_tokens"], spec.max_positions)}  # fmt: skip
            jobs.append(JobSpec(common, kind="ends"))
            jobs += [
                JobSpec(common, kind="method", method=name, budget=f, draws=config["draws"])
                for name in config["methods"]
                for f in config["budget"]
            ]
        return jobs

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        exact, uniform, human = _ends(spec["model"], spec["documents"])
        samples = st.resamples(len(human), spec["bootstrap"])
        n = len(human)
        base = {"kind": "similarity", "kernel": "softmax", "dataset": spec["dataset"],
                "data": lee.NAME, "documents": n, "pairs": n * (n - 1) // 2}  # fmt: skip
        if spec["kind"] == "ends":
            boot = st.bootstrap({EXACT: exact[None], UNIFORM: uniform[None]}, human, samples)
            rows = [
                _row(base, name, "human_spearman", _full(sims, human), boot[name])
                for name, sims in ((EXACT, exact), (UNIFORM, uniform))
            ]
            diff = _full(uniform, human) - _full(exact, human)
            rows.append(
                _row(base, UNIFORM, "human_spearman_minus_exact", diff, boot[UNIFORM] - boot[EXACT])
            )
            return rows
        method = Method(spec["method"], spec["budget"])
        draws = 1 if method.deterministic else spec["draws"]
        seeds = [int(s) for s in rng.integers(2**63, size=draws)]
        docs = _documents(spec["documents"])
        bert = models.load_model(spec["model"], "float32")
        sims, finite = [], []
        for seed in seeds:
            attend = method.attention(spec["model"], spec["fit_tokens"], seed)
            with np.errstate(over="ignore", invalid="ignore"):
                emb = bert.embed(docs, attend, batch=BATCH)
            sims.append(emb @ emb.T)
            finite.append(np.isfinite(emb).all(axis=1))
        sims_arr = np.stack(sims)
        per_draw = st.pair_spearman(sims_arr, human, *np.triu_indices(n, 1))
        boot = st.bootstrap({"m": sims_arr, EXACT: exact[None], UNIFORM: uniform[None]}, human,
                            samples)  # fmt: skip
        rho_e, rho_u = _full(exact, human), _full(uniform, human)
        base = {**base, **method.columns(), "draws": draws}
        name = spec["method"]
        bad = float(1 - np.mean(finite))
        m, exact_b, uniform_b = boot["m"], boot[EXACT], boot[UNIFORM]
        gap = st.gap_recovered(per_draw, rho_e, rho_u), st.gap_recovered(m, exact_b, uniform_b)
        metrics = {
            "human_spearman": (per_draw, m),
            "human_spearman_minus_exact": (per_draw - rho_e, m - exact_b),
            "human_spearman_minus_uniform": (per_draw - rho_u, m - uniform_b),
            "human_gap_recovered": gap,
        }
        rows = [_row(base, name, metric, *values) for metric, values in metrics.items()]
        note = NOTES["embedding_nonfinite"]
        nonfinite = {"metric": "embedding_nonfinite", "value": bad, "stderr": None, "note": note}
        return [*rows, {**base, "estimator": name, **nonfinite, "n_trials": draws}]

    def job_cost(self, spec: JobSpec) -> float | None:
        """Forward passes: one per draw of a method (two for the ends), in units of one pass;
        a learned map's first run also fits it (cached)."""
        if spec["kind"] == "ends":
            return 2.0
        method = Method(spec["method"], spec["budget"])
        return 1.0 + (1 if method.deterministic else spec["draws"])


def _documents(count: int) -> list[str]:
    docs = lee.load().documents
    return list(docs[:count] if count else docs)


def _full(sims: np.ndarray, human: np.ndarray) -> float:
    return float(st.pair_spearman(sims, human, *np.triu_indices(len(human), 1)))


@functools.lru_cache(maxsize=4)
def _ends(model: str, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact and uniform attention's similarity matrices (n, n) and the human scores (n, n) of
    the first ``count`` documents (0: all); exact embeddings cached on disk."""
    docs = _documents(count)
    human = lee.load().human[: len(docs), : len(docs)]
    spec = models.check_model(model)
    exact = models.embeddings(model, tuple(docs), spec.max_positions, "float32")
    with threadpool_limits(limits=1):
        uniform = models.load_model(model, "float32").embed(
            docs, uniform_attention, max_tokens=spec.max_positions, batch=BATCH
        )
    return exact @ exact.T, uniform @ uniform.T, human


def _row(
    base: dict[str, Any], name: str, metric: str, per_draw: Any, boot: np.ndarray
) -> dict[str, Any]:
    """One metric's row: the mean over draws with its standard error (None for one draw), and
    the 95 % bootstrap interval over documents."""
    values = np.atleast_1d(np.asarray(per_draw, float))
    ok = values[np.isfinite(values)]
    mean, se = mean_se(ok) if ok.size else (float("nan"), None)
    low, high = st.interval(boot)
    note = NOTES[metric]
    if ok.size < values.size:
        note += f"; {values.size - ok.size} of {values.size} draws not finite"
    return {**base, "estimator": name, "metric": metric, "value": float(mean),
            "stderr": se if values.size > 1 else None, "n_trials": int(ok.size),
            "ci_low": low, "ci_high": high, "note": note}  # fmt: skip
