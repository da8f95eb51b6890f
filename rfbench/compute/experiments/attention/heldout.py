"""Fit on one text, measure on another: the attention experiment's held-out heads and fitted maps.

docs/experiments.md#held-out-text: model heads are fitted on the GPL-3 text and measured on the
GFDL-1.3 text, a ``--data`` file's on the first and the second half of its tokens; a learned
map's fit and its CPU time are cached in :func:`cache_dir`, keyed on every input.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import zlib
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

    q, k, v: (heads, T, d) measured; fit_q, fit_k: (heads, T', d) fitting; ``columns`` the rows'
    ``fit_text`` and ``text``; ``identity`` what the fitting heads are (for the fit cache).
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    fit_q: np.ndarray
    fit_k: np.ndarray
    columns: dict[str, str]
    identity: dict[str, str] = field(default_factory=dict)


def measured(tokens: int) -> int:
    """How many of a --data file's ``tokens`` are measured: the second half, n − ⌊n/2⌋."""
    return tokens - tokens // 2


def split(model: str, data: str, tokens: int, layer: int) -> Heads:
    """The measured and fitting heads of one layer (module doc).

    Parameters
    ----------
    model : str
        The model folder ("" = default); ignored with ``data``.
    data : str
        A --data file reference, or "".
    tokens : int
        Sequence length of both texts (model heads).
    layer : int

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
        return Heads(q[:, t:], k[:, s:], v[:, s:], q[:, :t], k[:, :s], columns, identity)
    held = models.activations(model, texts.text(source.HELD_OUT), tokens)
    fit = models.activations(model, texts.text(source.TEXT), tokens)
    q, k, v = held.q[layer], held.k[layer], held.v[layer]
    fq, fk = fit.q[layer], fit.k[layer]
    identity = {
        "model_sha256": models.model_digest(model),
        "text_sha256": hashlib.sha256(texts.text(source.TEXT).encode()).hexdigest(),
        "fit": f"{source.TEXT} tokens={tokens} layer={layer}",
    }
    columns = {"fit_text": source.TEXT, "text": source.HELD_OUT}
    return Heads(q, k, v, fq, fk, columns, identity)


def cache_dir() -> Path:
    """The folder of fitted maps, in rfbench's cache folder (:func:`models.cache_root`)."""
    return models.cache_root() / FOLDER


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
        fit = (self.heads.fit_q[h], self.heads.fit_k[h])
        d = fit[0].shape[-1]
        if not declares(type(est), "fit_state", Estimator):
            return est.sample(gen, d=d, draws=draws, fit=fit)
        state = self._fitted(est, h, fit)
        self.costs[(label or est.name, h)] = {
            "fit_seconds": float(state["fit_seconds"]),
            "fit_kl": float(state["loss"]),
        }
        return est.draw_from_state(state, d, draws)

    def _fitted(
        self, est: Estimator, h: int, fit: tuple[np.ndarray, np.ndarray]
    ) -> dict[str, np.ndarray]:
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
        key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        path = cache_dir() / f"{re.sub(r'[^A-Za-z0-9.-]', '_', est.name)}-{key[:24]}.npz"

        def compute() -> dict[str, np.ndarray]:
            # one BLAS thread: the cached fit is the one any worker computes, and its CPU time
            # is one core's
            with threadpool_limits(limits=1):
                start = time.process_time()
                d = fit[0].shape[-1]
                state = est.fit_state(np.random.default_rng(seed), d, fit, self.causal)
                seconds = time.process_time() - start
            return {**state, "fit_seconds": np.array(seconds)}

        return models.cached(path, identity, compute)

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
