"""The language model's inputs and what its exact passes leave behind, cached per machine.

docs/experiments.md#language-model. Perplexity is measured on the GFDL-1.3 text (the attention
study's held-out text), cut into ``sequences`` consecutive sequences of ``tokens`` tokens; learned
maps and fitted couplings are fitted on the first ``tokens`` tokens of the GPL-3 text. The exact
pass of each measured sequence keeps every layer's input (a pass with one layer swapped restarts
there) and its per-token loss; the exact pass of the fitting sequence keeps every layer's queries
and keys. All live in rfbench's cache (rfbench.compute.models.cached), keyed on the model, the
text and the model code's digest.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import zlib
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from rfbench.compute import models
from rfbench.compute.checks import UserError
from rfbench.compute.features.base import Draw, Estimator
from rfbench.compute.models import lm, texts

#: the measured and the fitting text (those of the attention study)
HELD_OUT, FIT_TEXT = "GFDL-1.3", "GPL-3"


def cache_dir() -> Path:
    """The folder of the LM's cached passes and fits."""
    return models.cache_root() / "lm"


def _identity(model: str, text: str, *kind: object) -> tuple[Path, dict[str, str]]:
    sha = hashlib.sha256(text.encode()).hexdigest()
    code = models.encoder_digest()
    lm_entry = lm.entry(model)
    weights = lm_entry.files["model.safetensors"]
    name = "-".join([lm_entry.name, weights[:12], sha[:12], *map(str, kind), code[:12]])
    identity = {"model_sha256": weights, "text_sha256": sha, "code": code,
                "kind": " ".join(map(str, kind))}  # fmt: skip
    return cache_dir() / f"{name}.npz", identity


def text_ids(model: str, name: str) -> np.ndarray:
    """Token ids of one of the texts (rfbench.compute.models.texts)."""
    return lm.encode(model, texts.text(name))


def held_out(model: str, tokens: int, sequences: int) -> np.ndarray:
    """The measured sequences: (sequences, tokens) consecutive token ids of the held-out text.

    Raises
    ------
    UserError
        The text is shorter than ``sequences × tokens`` tokens (one line).
    """
    ids = text_ids(model, HELD_OUT)
    if len(ids) < sequences * tokens:
        raise UserError(
            f"the held-out text {HELD_OUT} has {len(ids)} tokens, fewer than sequences × tokens "
            f"= {sequences} × {tokens}; ask for fewer"
        )
    return ids[: sequences * tokens].reshape(sequences, tokens)


def exact_pass(model: str, ids: np.ndarray) -> dict[str, np.ndarray]:
    """The exact pass of one sequence: ``inputs`` (layers, T, hidden), every layer's input, and
    ``nll`` (T − 1,), the loss of each next token; cached."""
    path, identity = _identity(model, " ".join(map(str, ids.tolist())), "exact", len(ids))

    def compute() -> dict[str, np.ndarray]:
        net = lm.load_lm(model)
        inputs: list[np.ndarray] = []
        hidden = net.hidden_states(ids, inputs=inputs)
        return {"inputs": np.stack(inputs), "nll": net.token_nll(hidden[:-1], ids[1:])}

    return models.cached(path, identity, compute)


def fitting(model: str, tokens: int) -> np.ndarray:
    """The first ``tokens`` token ids of the fitting text (UserError if it is shorter)."""
    ids = text_ids(model, FIT_TEXT)
    if len(ids) < tokens:
        raise UserError(f"the fitting text {FIT_TEXT} has {len(ids)} tokens, fewer than {tokens}")
    return ids[:tokens]


def fit_qk(model: str, tokens: int) -> dict[str, np.ndarray]:
    """The exact pass's queries ``q`` (layers, heads, T, d) and keys ``k`` (layers, kv_heads,
    T, d) on the first ``tokens`` tokens of the fitting text; cached."""
    ids = fitting(model, tokens)
    path, identity = _identity(model, texts.text(FIT_TEXT), "fit-qk", tokens)

    def compute() -> dict[str, np.ndarray]:
        keep: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        lm.load_lm(model).hidden_states(ids, keep=keep)
        return {"q": np.stack([q for q, _, _ in keep]), "k": np.stack([k for _, k, _ in keep])}

    return models.cached(path, identity, compute)


def interleaved(q: np.ndarray, k: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """One key/value head's fitting pairs: row i the query of query head g·G + (i mod G) at
    position i (G = the group size), and the keys (T, d), so one map is fitted on every query
    head it serves while query i still sees keys 0..i (the causal fit)."""
    group = q.shape[0] // k.shape[0]
    heads = g * group + np.arange(q.shape[1]) % group
    return q[heads, np.arange(q.shape[1])], k[g]


class Fits:
    """Learned maps fitted once per (layer, key/value head) on the fitting text, cached on disk
    with their CPU seconds."""

    def __init__(self, model: str, tokens: int) -> None:
        self.model, self.tokens = model, tokens
        self.seconds: dict[tuple[str, int, int], float] = {}
        self._qk: dict[str, np.ndarray] | None = None

    def data(self, layer: int, g: int) -> tuple[np.ndarray, np.ndarray]:
        """The fitting pairs of (layer, key/value head g), float64."""
        if self._qk is None:
            self._qk = fit_qk(self.model, self.tokens)
        q, k = interleaved(self._qk["q"][layer], self._qk["k"][layer], g)
        return q.astype(np.float64), k.astype(np.float64)

    def draw(
        self,
        est: Estimator,
        layer: int,
        g: int,
        fit: tuple[np.ndarray, np.ndarray],
        draws: int = 1,
    ) -> Draw:
        """The learned map ``est`` of (layer, g), fitted causally (cached), as ``draws``
        identical draws."""
        seed = zlib.crc32(f"{est.name} {est.m} {layer} {g}".encode())
        path, identity = _identity(self.model, texts.text(FIT_TEXT), "fit", self.tokens,
                                   layer, g, est.m)  # fmt: skip
        identity.update({"estimator": est.name, "fit_code": est.fit_code, "seed": str(seed)})
        key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        path = path.with_name(f"{re.sub(r'[^A-Za-z0-9.-]', '_', est.name)}-{key[:24]}.npz")

        def compute() -> dict[str, np.ndarray]:
            with threadpool_limits(limits=1):
                start = time.process_time()
                state = est.fit_state(np.random.default_rng(seed), fit[0].shape[1], fit, True)
                return {**state, "fit_seconds": np.array(time.process_time() - start)}

        state = models.cached(path, identity, compute)
        self.seconds[(est.name, layer, g)] = float(state["fit_seconds"])
        return est.draw_from_state(state, fit[0].shape[1], draws)
