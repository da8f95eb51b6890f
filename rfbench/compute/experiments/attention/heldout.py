"""Fit on one text, measure on another: the attention experiment's held-out heads and fitted maps.

docs/experiments.md#held-out-text: model heads are fitted on the whole GPL-3 text (or its first
``fit_tokens`` tokens), cut into sequences of the measured length (each attending to itself), and
measured on the GFDL-1.3 text; a ``--data`` file's on the first and the second half of its
tokens. A learned map's fit and its CPU time are cached in :func:`cache_dir`, keyed on every
input: the model's files, the encoder's code and libraries (:func:`models.encoder_digest`), the
fitting sequences, the fitting code and options; a cached fit whose arrays do not have the
estimator's shapes is damage, computed again.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from rfbench.compute import models
from rfbench.compute.datasets import user
from rfbench.compute.experiments.attention import data as source
from rfbench.compute.features.base import Draw, Estimator, declares
from rfbench.compute.models import texts

#: the cache folder of fitted maps (under $RFBENCH_CACHE or the per-user cache folder)
FOLDER = "fitted-maps"
#: what a --data file's rows say they were fitted and measured on
FIRST_HALF, SECOND_HALF = "first half of the tokens", "second half of the tokens"


@dataclass(frozen=True)
class Heads:
    """One layer's measured heads and the heads their estimators are fitted on.

    q, k, v: (heads, T, d) measured; fit_q, fit_k: one (heads, T_s, d) array per fitting sequence
    (each sequence attends to itself only); ``columns`` the rows' ``fit_text`` and ``text``;
    ``identity`` what the fitting heads are (for the fit cache).
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    fit_q: tuple[np.ndarray, ...]
    fit_k: tuple[np.ndarray, ...]
    columns: dict[str, str]
    identity: dict[str, str] = field(default_factory=dict)

    def fitting(self, h: int, sequences: bool) -> tuple[Any, Any] | None:
        """Head h's fitting queries and keys: lists of (T_s, d) sequences (``sequences``, for a
        fit that copies attention within each), else every fitting token as one (ΣT_s, d) cloud;
        None without fitting heads (a job whose methods fit nothing)."""
        if not self.fit_q:
            return None
        qs, ks = [q[h] for q in self.fit_q], [k[h] for k in self.fit_k]
        if sequences:
            return qs, ks
        return np.concatenate(qs), np.concatenate(ks)


def measured(tokens: int) -> int:
    """How many of a --data file's ``tokens`` are measured: the second half, n − ⌊n/2⌋."""
    return tokens - tokens // 2


def split(
    model: str, data: str, tokens: int, layer: int, fit_tokens: int = 0, fitting: bool = True
) -> Heads:
    """The measured and fitting heads of one layer (module doc).

    Parameters
    ----------
    model : str
        The model folder ("" = default); ignored with ``data``.
    data : str
        A --data file reference, or "".
    tokens : int
        Sequence length of the measured text and of each fitting sequence (model heads).
    layer : int
    fit_tokens : int
        Tokens of the fitting text (0 = all of it; model heads).
    fitting : bool
        Also the fitting heads (False: none, for jobs that fit nothing).

    Returns
    -------
    Heads
    """
    if data:
        q, k, v = source.load_qkv(data)
        t, s = (n - measured(n) for n in (q.shape[1], k.shape[1]))
        path = user.parse(data)[0]
        identity = {"data_sha256": user.sha256(path), "fit": f"q[:{t}] k[:{s}]"}
        columns = {"fit_text": FIRST_HALF, "text": SECOND_HALF}
        return Heads(q[:, t:], k[:, s:], v[:, s:], (q[:, :t],), (k[:, :s],), columns, identity)
    held = models.activations(model, texts.text(source.HELD_OUT), tokens)
    text = texts.text(source.TEXT)
    pieces = models.pieces(model, text, tokens, fit_tokens)
    fq: tuple[np.ndarray, ...] = ()
    fk: tuple[np.ndarray, ...] = ()
    if fitting:
        fit_q, fit_k, lengths = models.sequences(model, text, tokens, fit_tokens, layer)
        cuts = np.cumsum(lengths)[:-1]
        fq = tuple(np.split(fit_q, cuts, axis=1))
        fk = tuple(np.split(fit_k, cuts, axis=1))
    q, k, v = held.q[layer], held.k[layer], held.v[layer]
    identity = {
        "model_sha256": models.model_digest(model),
        # the encoder that computed the fitting queries and keys: its code and libraries
        "encoder_sha256": models.encoder_digest(),
        "text_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "sequences_sha256": hashlib.sha256("\0".join(pieces).encode()).hexdigest(),
        "fit": f"{source.TEXT} tokens={tokens} sequences={len(pieces)} fit_tokens={fit_tokens} "
        f"layer={layer}",
    }
    columns = {"fit_text": source.TEXT, "text": source.HELD_OUT}
    return Heads(q, k, v, fq, fk, columns, identity)


def cache_dir() -> Path:
    """The folder of fitted maps, in rfbench's cache folder (:func:`models.cache_root`)."""
    return models.cache_root() / FOLDER


def cached_fit(
    est: Estimator,
    folder: Path,
    identity: dict[str, str],
    seed: int,
    d: int,
    fit: Callable[[], Any],
    causal: bool,
    shapes: dict[str, tuple[int, ...]] | None = None,
) -> dict[str, np.ndarray]:
    """A learned map's fit state and its CPU seconds (``fit_seconds``), cached in ``folder`` under
    the estimator's name and the hash of ``identity`` (:func:`models.cached`); ``fit()`` gives
    the fitting data when the fit is computed."""
    key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    path = folder / f"{re.sub(r'[^A-Za-z0-9.-]', '_', est.name)}-{key[:24]}.npz"

    def compute() -> dict[str, np.ndarray]:
        data = fit()
        # one BLAS thread: the cached fit is the one any worker computes, and its CPU time is one
        # core's
        with threadpool_limits(limits=1):
            start = time.process_time()
            state = est.fit_state(np.random.default_rng(seed), d, data, causal)
            seconds = time.process_time() - start
        return {**state, "fit_seconds": np.array(seconds)}

    return models.cached(path, identity, compute, shapes)


class Fitter:
    """Draws of one layer's estimators, each fitted on the fitting heads (learned maps through the
    cache), with the fit cost of each learned map and head."""

    def __init__(self, heads: Heads, causal: bool = False) -> None:
        self.heads, self.causal = heads, causal
        self.costs: dict[tuple[str, int], dict[str, float]] = {}

    def sample(
        self, est: Estimator, gen: np.random.Generator, h: int, draws: int, label: str = ""
    ) -> Draw:
        """``draws`` draws of ``est`` fitted on head h's fitting queries and keys; a learned map's
        fit cost is reported under ``label`` (the method, e.g. ``window+hedgehog``; default the
        estimator's name)."""
        learned = declares(type(est), "fit_state", Estimator)
        fit = self.heads.fitting(h, sequences=learned)
        d = self.heads.q.shape[-1]
        if fit is None and (learned or est.data_dependent):
            raise ValueError(f"{est.name} is fitted, but this job has no fitting heads")
        if not learned:
            return est.sample(gen, d=d, draws=draws, fit=fit)
        state = self._fitted(est, h, fit)
        self.costs[(label or est.name, h)] = {
            "fit_seconds": float(state["fit_seconds"]),
            "fit_kl": float(state["loss"]),
        }
        return est.draw_from_state(state, d, draws)

    def _fitted(self, est: Estimator, h: int, fit: tuple[Any, Any]) -> dict[str, np.ndarray]:
        seed = zlib.crc32(f"{est.name} {est.m} {self.heads.identity.get('fit')} {h}".encode())
        identity = {
            **self.heads.identity,
            "code": est.fit_code,
            "estimator": est.name,
            "projections": str(est.m),
            "head": str(h),
            "seed": str(seed),
            "causal": str(self.causal),
        }
        d = self.heads.q.shape[-1]
        shapes = {**est.state_shapes(d), "fit_seconds": ()}
        return cached_fit(est, cache_dir(), identity, seed, d, lambda: fit, self.causal, shapes)

    def cost_rows(
        self, common: dict[str, Any], columns: dict[str, dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """``fit_seconds`` and ``fit_kl`` rows of every method and head whose learned map was
        fitted here, with the method's ``columns`` (m, features, ...) beside ``common``."""
        return [
            {**common, **columns.get(name, {}), "estimator": name, "head": h,
             "metric": metric, "value": value, "stderr": None, "n_trials": 1,
             "note": _NOTES[metric]}
            for (name, h), costs in self.costs.items()
            for metric, value in costs.items()
        ]  # fmt: skip


_NOTES = {
    "fit_seconds": "CPU seconds of the fit (time.process_time), measured when fitted, then cached",
    "fit_kl": "attention KL on the fitting tokens (fit_text)",
}
