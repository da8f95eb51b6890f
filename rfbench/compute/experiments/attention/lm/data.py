"""The language model's inputs and what its exact passes leave behind, cached per machine.

docs/experiments.md#language-model. Perplexity is measured on the GFDL-1.3 text (the attention
study's held-out text), cut into ``sequences`` consecutive sequences of ``tokens`` tokens; learned
maps and fitted couplings are fitted on the first ``fit_tokens`` tokens of the GPL-3 text (0: all
of it), in consecutive sequences of the measured length. The exact pass of each measured sequence
keeps every layer's input (a pass with one layer swapped restarts there) and its per-token loss;
the exact passes of the fitting sequences keep every layer's queries and keys. All live in
rfbench's cache (rfbench.compute.models.cached), keyed on the model, the text and the model code's
digest.
"""

from __future__ import annotations

import functools
import hashlib
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rfbench.compute import models
from rfbench.compute.checks import UserError
from rfbench.compute.experiments.attention.heldout import cached_fit
from rfbench.compute.features.base import Draw, Estimator
from rfbench.compute.models import lm, texts
from rfbench.compute.models.cache import read_layer

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
    """The first ``tokens`` token ids of the fitting text, all of them for 0 (UserError if it is
    shorter)."""
    ids = text_ids(model, FIT_TEXT)
    if len(ids) < tokens:
        raise UserError(f"the fitting text {FIT_TEXT} has {len(ids)} tokens, fewer than {tokens}")
    return ids[:tokens] if tokens else ids


def fit_sequences(model: str, tokens: int, length: int) -> list[np.ndarray]:
    """The fitting token ids (:func:`fitting`) cut into consecutive sequences of ``length``
    tokens (the last one shorter), each run through the model on its own."""
    ids = fitting(model, tokens)
    return np.split(ids, np.arange(length, len(ids), length))


def fit_memory(model: str, tokens: int) -> int:
    """Peak bytes of the fitting passes' queries and keys (every layer's, float32, kept and then
    concatenated: twice), before the model's weights are read."""
    config = lm.lm_config(model)
    n = len(fitting(model, tokens))
    d = config["hidden"] // config["heads"]
    return 2 * 4 * config["layers"] * (config["heads"] + config["kv_heads"]) * n * d


def fit_qk(model: str, tokens: int, length: int, layer: int) -> tuple[np.ndarray, ...]:
    """One layer's queries (heads, ΣT_s, d) and keys (kv_heads, ΣT_s, d) of the exact passes over
    the fitting sequences (:func:`fit_sequences`), one after another, and the lengths T_s; every
    layer cached in one file, only ``layer``'s members read back."""
    parts = fit_sequences(model, tokens, length)
    path, identity = _identity(model, texts.text(FIT_TEXT), "fit-qk", tokens, length)
    got = read_layer(path, identity, layer)
    if got is None:

        def compute() -> dict[str, np.ndarray]:
            net, keep = lm.load_lm(model), []
            for ids in parts:
                keep.append([])
                net.hidden_states(ids, keep=keep[-1])
            arrays = {f"{side}{i}": np.concatenate([seq[i][j] for seq in keep], axis=1)
                      for i in range(len(keep[0])) for j, side in enumerate("qk")}  # fmt: skip
            return {**arrays, "lengths": np.array([len(ids) for ids in parts], dtype=float)}

        arrays = models.cached(path, identity, compute)
        got = (arrays[f"q{layer}"], arrays[f"k{layer}"]), arrays["lengths"]
    (q, k), lengths = got
    return q, k, lengths.astype(int)


def interleaved(q: np.ndarray, k: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """One key/value head's fitting pairs in one sequence: row i the query of query head
    g·G + (i mod G) at position i (G = the group size), and the keys (T, d), so one map is fitted
    on every query head it serves while query i still sees keys 0..i (the causal fit)."""
    group = q.shape[0] // k.shape[0]
    heads = g * group + np.arange(q.shape[1]) % group
    return q[heads, np.arange(q.shape[1])], k[g]


class Fits:
    """Learned maps fitted once per (layer, key/value head) on the fitting text, in sequences of
    ``length`` tokens (default one sequence of ``tokens``; ``tokens`` 0 = the whole text), cached
    on disk with their CPU seconds."""

    def __init__(self, model: str, tokens: int, length: int = 0) -> None:
        self.model, self.tokens, self.length = model, tokens, length or tokens
        self.seconds: dict[tuple[str, int, int], float] = {}
        self._layer: tuple[int, tuple[np.ndarray, ...]] | None = None

    def sequences(self, layer: int, g: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The fitting pairs of (layer, key/value head g), one (T_s, d) float64 array per
        sequence (:func:`interleaved`)."""
        if self._layer is None or self._layer[0] != layer:
            self._layer = layer, fit_qk(self.model, self.tokens, self.length, layer)
        q, k, lengths = self._layer[1]
        cuts = np.cumsum(lengths)[:-1]
        split = zip(np.split(q, cuts, axis=1), np.split(k, cuts, axis=1), strict=True)
        pairs = [interleaved(qs, ks, g) for qs, ks in split]
        return [p.astype(np.float64) for p, _ in pairs], [s.astype(np.float64) for _, s in pairs]

    def data(self, layer: int, g: int) -> tuple[np.ndarray, np.ndarray]:
        """The fitting pairs of (layer, key/value head g) as one cloud (ΣT_s, d) per side."""
        qs, ks = self.sequences(layer, g)
        return np.concatenate(qs), np.concatenate(ks)

    def draw(
        self,
        est: Estimator,
        layer: int,
        g: int,
        draws: int = 1,
    ) -> Draw:
        """The learned map ``est`` of (layer, g), fitted causally on the fitting sequences
        (cached), as ``draws`` identical draws."""
        seed = zlib.crc32(f"{est.name} {est.m} {layer} {g}".encode())
        _, identity = _identity(self.model, texts.text(FIT_TEXT), "fit", self.tokens,
                                self.length, layer, g, est.m)  # fmt: skip
        identity.update({"estimator": est.name, "fit_code": est.fit_code, "seed": str(seed)})
        config = lm.lm_config(self.model)
        d = config["hidden"] // config["heads"]
        fit = functools.partial(self.sequences, layer, g)  # read only when fitted
        state = cached_fit(est, cache_dir(), identity, seed, d, fit, True)
        self.seconds[(est.name, layer, g)] = float(state["fit_seconds"])
        return est.draw_from_state(state, d, draws)


def fit_keys(tokens: int, length: int) -> dict[str, int]:
    """A job spec's fitting keys: ``fit_tokens``, and ``fit_length`` (the sequence length the
    fitting text is cut into) only when the fit spans more than one sequence — the whole text
    (``tokens`` 0) or more than ``length`` tokens — so a one-sequence job's spec is as before."""
    many = tokens == 0 or tokens > length
    return {"fit_tokens": tokens, **({"fit_length": length} if many else {})}


def fits_of(spec: Mapping[str, Any]) -> Fits:
    """The :class:`Fits` of a job spec with the keys of :func:`fit_keys`."""
    return Fits(spec["model"], spec["fit_tokens"], spec.get("fit_length", 0))
