"""The swap-in score: a pretrained encoder with every softmax attention replaced by an estimator.

docs/experiments.md#attention. No training: per trial each (layer, head) gets one fresh draw
shared by every sentence (a random-feature model at inference; Choromanski et al., 2021, Sec. 3);
the encoder runs in float32 and the scores are ``swap_cosine``, ``swap_spearman`` and
``swap_nonfinite`` (mean over trials ± standard error).
"""

from __future__ import annotations

import functools
import zlib
from typing import Any

import numpy as np
from scipy import stats

from rfbench.compute import models
from rfbench.compute.experiments import JobSpec
from rfbench.compute.experiments.attention import budget
from rfbench.compute.experiments.attention.causal import prefix_attention
from rfbench.compute.experiments.attention.metrics import _real_maps, key_weights
from rfbench.compute.features.base import Estimator, declares
from rfbench.compute.models import texts
from rfbench.compute.models.bert import AttentionFn, FixedPrefix, causal_attention, exact_attention
from rfbench.compute.stats import standard_error


def uniform_attention(
    layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray, causal: bool = False
) -> np.ndarray:
    """Uniform attention: every output row the mean of the unmasked values (``causal``: output i
    the mean of the unmasked values 0..i).

    Parameters
    ----------
    layer : int
        Unused (the AttentionFn signature).
    q, k, v : ndarray, shape (B, heads, T, d_head)
    mask : ndarray of bool, shape (B, T)
    causal : bool

    Returns
    -------
    ndarray, shape (B, heads, T, d_head)
    """
    w = mask[:, None, :, None].astype(v.dtype)
    if causal:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.cumsum(v * w, axis=2) / np.cumsum(w, axis=2)
    mean = (v * w).sum(axis=2, keepdims=True) / w.sum(axis=2, keepdims=True)
    return np.broadcast_to(mean, v.shape).copy()


def random_feature_attention(est: Estimator, seed: int, causal: bool = False) -> AttentionFn:
    """An attention function using ``est``'s features, D̂⁻¹φ(Q)(ψ(K)ᵀV) in linear time.

    The draw of (layer, head) comes from a generator seeded by (seed, layer, head), so every
    batch of sentences of one trial sees the same projections.

    Parameters
    ----------
    est : Estimator
        A softmax-kernel estimator.
    seed : int
        The trial's seed.
    causal : bool
        Causal attention as prefix sums (rfbench.compute.experiments.attention.causal).

    Returns
    -------
    AttentionFn
        ``(layer, q, k, v, mask) -> out``, q, k, v and out of shape (B, heads, T, d_head), mask
        (B, T) bool.
    """

    # a draw that does not depend on the batch's queries and keys is the same in every batch of
    # the trial (the same generator seed): drawn once per (layer, head)
    data_free = not est.data_dependent
    draws: dict[tuple[int, int], Any] = {}

    def attend(
        layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray
    ) -> np.ndarray:
        b, heads, t, d = q.shape
        out = np.empty_like(v)
        for h in range(heads):
            qh = q[:, h].reshape(-1, d).astype(np.float64)
            kh = k[:, h].reshape(-1, d).astype(np.float64)
            flat = mask.reshape(-1)
            draw = draws.get((layer, h)) if data_free else None
            if draw is None:
                gen = np.random.default_rng([seed, layer, h])
                draw = est.sample(gen, d=d, draws=1, fit=(qh[flat], kh[flat]))
                if data_free:
                    draws[(layer, h)] = draw
            fq = est.query_log_features(draw, qh)
            fk = est.key_log_features(draw, kh)
            phi, psi = _real_maps(fq.values[0], fk.values[0])
            phi, psi = phi.reshape(b, t, -1), psi.reshape(b, t, -1)
            if causal:  # the same draw, as prefix sums over the keys each token sees
                scales = np.where(mask, fk.log_scale[0].reshape(b, t), -np.inf)
                out[:, h] = prefix_attention(phi, psi, scales, v[:, h].astype(np.float64))[0]
                continue
            w = key_weights(fk.log_scale[0].reshape(b, t), mask)
            psi = psi * w[..., None]
            vh = v[:, h].astype(np.float64)
            kv = np.swapaxes(psi, 1, 2) @ vh
            num = phi @ kv
            den = (phi @ psi.sum(axis=1)[..., None])[..., 0]
            with np.errstate(divide="ignore", invalid="ignore"):
                out[:, h] = num / den[..., None]
        return out

    return attend


def only_in_layer(attend: AttentionFn, layer: int, causal: bool = False) -> AttentionFn:
    """``attend`` in ``layer``, exact softmax attention (causal or not) in every other layer: the
    per-layer swap-in score, how much of the embedding one layer's approximation costs."""
    exact_fn = causal_attention if causal else exact_attention

    def attention(
        at: int, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray
    ) -> np.ndarray:
        return (attend if at == layer else exact_fn)(at, q, k, v, mask)

    return attention


def exact(model: str, sentences: int, tokens: int, causal: bool = False) -> np.ndarray:
    """The exact embeddings of the first ``sentences`` sentences, float32 encoder, causal or not
    (cached on disk by rfbench.compute.models.embeddings: computed once, not once per worker
    process; and in memory per model identity)."""
    return _exact(model, models.model_digest(model), sentences, tokens, causal)


@functools.lru_cache(maxsize=2)
def _exact(model: str, digest: str, sentences: int, tokens: int, causal: bool) -> np.ndarray:
    return models.embeddings(model, texts.sentences()[:sentences], tokens, "float32", causal)


def clear_cache() -> None:
    """Forget the exact embeddings held in memory (``--force``)."""
    _exact.cache_clear()


def scores(exact: np.ndarray, swapped: np.ndarray) -> tuple[float, float, float]:
    """(mean cosine, Spearman of pairwise similarities, non-finite fraction).

    Parameters
    ----------
    exact, swapped : ndarray, shape (n, hidden)
        L2-normalised embeddings.

    Returns
    -------
    tuple of float
        nan scores if fewer than 3 swapped embeddings are finite.
    """
    ok = np.isfinite(swapped).all(axis=1)
    bad = float(1 - ok.mean())
    if ok.sum() < 3:
        return float("nan"), float("nan"), bad
    e, s = exact[ok], swapped[ok]
    cos = float(np.mean(np.sum(e * s, axis=1)))
    iu = np.triu_indices(len(e), 1)
    rho = stats.spearmanr((e @ e.T)[iu], (s @ s.T)[iu]).statistic
    return cos, float(rho), bad


def run(spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The rows of one swap job: mean and standard error over trials of each score.

    Parameters
    ----------
    spec : JobSpec
        ``estimator`` (a registry name or ``uniform``), ``budget`` (features), ``model``,
        ``dataset``, ``sentences``, ``trials``, ``tokens``; ``layer`` to swap that layer only
        (the others exact).
    rng : numpy.random.Generator
        The job's generator (one seed per trial).

    Returns
    -------
    list of dict
        Rows of ``swap_cosine``, ``swap_spearman`` and ``swap_nonfinite``.
    """
    model, n, tokens = spec["model"], spec["sentences"], spec["tokens"]
    causal = spec.get("causal", False)  # every attention masked, the reference's too
    reference = exact(model, n, tokens, causal)
    bert = models.load_model(model, "float32")
    sentences = texts.sentences()[:n]
    name = spec["estimator"]
    # m = ⌊F/l⌋ projections at the feature budget F (equal features)
    est = budget.estimator(name, spec["budget"]) if name != "uniform" else None
    m = est.m if est is not None else 0
    base = {"kind": "swap", "estimator": name, "kernel": "softmax", "dataset": spec["dataset"],
            "m": m or None, "budget": spec["budget"] or None,
            "features": m * est.features_per_projection  # None: no per-projection width
            if est is not None and est.features_per_projection else None,
            "sentences": len(sentences), "tokens": tokens,
            **({"layer": spec["layer"]} if spec.get("layer") is not None else {})}  # fmt: skip
    base.update({"causal": True} if causal else {})
    if est is not None and declares(type(est), "fit_state", Estimator):
        why = ("a learned map would be fitted on the sentences it is scored on (they come from "
               "all three texts); not scored")  # fmt: skip
        return [{**base, "metric": "skipped", "value": 1.0, "stderr": None, "n_trials": 0,
                 "note": why}]  # fmt: skip
    trials = 1 if name == "uniform" else spec["trials"]
    # a deterministic map (taylor2) swaps in the same attention in every trial: one, repeated
    computed = 1 if est is not None and est.deterministic else trials
    # one layer swapped: the exact layers below it are the same in every trial (computed once)
    prefix = None
    if spec.get("layer") is not None:
        prefix = FixedPrefix(spec["layer"], causal_attention if causal else exact_attention)
    results = []
    for _ in range(computed):
        if est is None:
            attend = functools.partial(uniform_attention, causal=causal)
        else:
            seed = int(rng.integers(2**63)) ^ zlib.crc32(name.encode())
            attend = random_feature_attention(est, seed, causal)
        if spec.get("layer") is not None:
            attend = only_in_layer(attend, spec["layer"], causal)
        with np.errstate(over="ignore", invalid="ignore"):
            swapped = bert.embed(sentences, attend, max_tokens=tokens, batch=32, prefix=prefix)
        results.append(scores(reference, swapped))
    values = np.array(results * (trials // computed))
    rows = []
    for j, metric in enumerate(("swap_cosine", "swap_spearman", "swap_nonfinite")):
        col = values[:, j]
        ok = col[np.isfinite(col)]
        if ok.size == 0:
            continue  # no trial kept 3 finite embeddings: swap_nonfinite says so
        se = standard_error(ok)
        if computed == 1 and se is not None:
            se = 0.0  # a deterministic map: one evaluation repeated (not rounding noise)
        rows.append({**base, "metric": metric, "value": float(ok.mean()),
                     "stderr": se, "n_trials": int(ok.size)})  # fmt: skip
    return rows
