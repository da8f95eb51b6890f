"""A small numpy BERT encoder (Devlin et al., 2019) that exposes its attention.

The post-LayerNorm encoder of the Hugging Face ``BertModel`` in float64 (or float32), with
mean-pooled, L2-normalised sentence embeddings (the sentence-transformers pooling). Queries and
keys are scaled by d_head^(-1/4) each, so qᵀk is the attention logit; every layer's attention can
be replaced by a callable (the swap-in score; docs/experiments.md#attention).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.special import erf

from rfbench.compute.models.llama import softmax_attention
from rfbench.compute.models.tokens import encode_batch, load_tokenizer

#: an attention replacement: (layer, q, k, v, key_mask) -> output, with q, k of shape
#: (B, heads, T, d_head) already scaled by d_head^(-1/4), v (B, heads, T, d_head), key_mask
#: (B, T) bool; returns (B, heads, T, d_head)
AttentionFn = Callable[[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def exact_attention(
    layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray, key_mask: np.ndarray
) -> np.ndarray:
    """softmax(qkᵀ) v over the unmasked keys, stabilised by the row maximum.

    Parameters
    ----------
    layer : int
        Layer index (unused; part of the :data:`AttentionFn` signature).
    q, k, v : ndarray, shape (B, heads, T, d_head)
        Scaled queries and keys (qᵀk is the logit) and values.
    key_mask : ndarray of bool, shape (B, T)
        Which keys are real tokens.

    Returns
    -------
    ndarray, shape (B, heads, T, d_head)
    """
    return softmax_attention(q, k, v, key_mask[:, None, None, :])


def causal_attention(
    layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray, key_mask: np.ndarray
) -> np.ndarray:
    """:func:`exact_attention` with the causal mask: query i sees the unmasked keys 0..i (the
    causal swap-in score's reference, docs/experiments.md#causal-attention).

    Parameters and returns as :func:`exact_attention`.
    """
    t = q.shape[-2]
    return softmax_attention(q, k, v, key_mask[:, None, None, :] & np.tri(t, dtype=bool))


@dataclass(frozen=True)
class Activations:
    """What one forward pass of one sequence exposes.

    Attributes
    ----------
    q, k, v : ndarray, shape (layers, heads, T, d_head)
        Per layer and head the scaled queries and keys (qᵀk = logit) and the values.
    embedding : ndarray, shape (hidden,)
        The mean-pooled, L2-normalised sentence embedding.
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    embedding: np.ndarray


@dataclass
class FixedPrefix:
    """The first ``layers`` encoder layers, run with ``attention`` whatever a forward pass's own
    attention, and their output per input batch (``states``, filled by :meth:`Bert.forward`).

    Passes that differ only from layer ``layers`` on (e.g. trials of an attention swapped into that
    layer alone) compute the common layers once: the same operations on the same inputs, so their
    outputs are those of full passes bit for bit.
    """

    layers: int
    attention: AttentionFn
    states: dict[tuple, np.ndarray] = field(default_factory=dict)


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    half = x.dtype.type(0.5)  # a float64 constant would promote a float32 encoder to float64
    return half * x * (1 + erf(x * np.sqrt(half)))


class Bert:
    """A BERT encoder read from a model folder (see the module docstring).

    Parameters
    ----------
    folder : path
        Holds ``config.json``, ``model.safetensors`` and ``tokenizer.json``.
    max_tokens : int, optional
        Longest sequence, special tokens included (default: the config's position count).
    dtype : numpy dtype
        Of the weights and the computation: float64 (default) or float32 (about 5 times faster;
        embeddings then differ by ~1e-7).
    """

    def __init__(
        self, folder: str | Path, max_tokens: int | None = None, dtype: type = np.float64
    ) -> None:
        from safetensors.numpy import load_file

        folder = Path(folder)
        self.folder = folder
        config = json.loads((folder / "config.json").read_text())
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.d_head = self.hidden // self.heads
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_tokens = int(max_tokens or config.get("max_position_embeddings", 512))
        act = config.get("hidden_act", "gelu")
        if act != "gelu":
            raise ValueError(f"model {folder}: hidden_act {act!r} is not supported (only 'gelu')")
        raw = load_file(str(folder / "model.safetensors"))
        prefix = "bert." if any(k.startswith("bert.") for k in raw) else ""
        self.w = {
            k[len(prefix) :]: np.asarray(v, dtype=dtype)
            for k, v in raw.items()
            if k.startswith(prefix) and v.dtype.kind == "f"
        }
        self.tokenizer = load_tokenizer(folder)

    # ------------------------------------------------------------------ tokens

    def tokenize(
        self, texts: Sequence[str], max_tokens: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and mask of a batch, padded with 0 to the longest sequence.

        Parameters
        ----------
        texts : sequence of str
        max_tokens : int, optional
            Truncation length, special tokens included (default ``self.max_tokens``).

        Returns
        -------
        ids : ndarray of int64, shape (B, T)
        mask : ndarray of bool, shape (B, T)
        """
        limit = min(max_tokens or self.max_tokens, self.max_tokens)
        encoded = encode_batch(self.folder, self.tokenizer, texts, limit)
        length = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), length), dtype=np.int64)
        mask = np.zeros((len(encoded), length), dtype=bool)
        for i, e in enumerate(encoded):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = True
        return ids, mask

    # ------------------------------------------------------------------ forward

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        flat = x.reshape(-1, x.shape[-1])  # one GEMM, not one per sentence
        out = flat @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]
        return out.reshape(*x.shape[:-1], out.shape[-1])

    def _split(self, x: np.ndarray) -> np.ndarray:
        b, t, _ = x.shape
        return x.reshape(b, t, self.heads, self.d_head).transpose(0, 2, 1, 3)

    def forward(
        self,
        ids: np.ndarray,
        mask: np.ndarray,
        attention: AttentionFn = exact_attention,
        keep: bool = False,
        prefix: FixedPrefix | None = None,
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """The last hidden states, and optionally every layer's (q, k, v).

        Parameters
        ----------
        ids : ndarray of int, shape (B, T)
        mask : ndarray of bool, shape (B, T)
        attention : AttentionFn
            Computes each layer's attention output (default: exact softmax attention).
        keep : bool
            Also return every layer's scaled q, k and v, each (B, heads, T, d_head).
        prefix : FixedPrefix, optional
            Its first layers run with its attention, their output computed once per input batch
            and reused (``attention`` then runs the other layers only); not with ``keep``.

        Returns
        -------
        hidden : ndarray, shape (B, T, hidden)
        qkv : list of (q, k, v) per layer (empty unless ``keep``)
        """
        if prefix is not None and prefix.layers:
            if keep:
                raise ValueError("forward: keep needs every layer computed (no prefix)")
            key = (ids.shape, ids.tobytes(), mask.tobytes())
            if key not in prefix.states:
                x = self._layers(self._embeddings(ids), mask, prefix.attention, 0, prefix.layers)
                x.setflags(write=False)
                prefix.states[key] = x
            return self._layers(prefix.states[key], mask, attention, prefix.layers), []
        kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        x = self._layers(self._embeddings(ids), mask, attention, 0, kept=kept if keep else None)
        return x, kept

    def _embeddings(self, ids: np.ndarray) -> np.ndarray:
        """The embedding layer: word + position + token type, LayerNorm; (B, T, hidden)."""
        w, t = self.w, ids.shape[1]
        x = w["embeddings.word_embeddings.weight"][ids]
        x = x + w["embeddings.position_embeddings.weight"][:t][None]
        x = x + w["embeddings.token_type_embeddings.weight"][0][None, None]
        ln = "embeddings.LayerNorm"
        return _layer_norm(x, w[f"{ln}.weight"], w[f"{ln}.bias"], self.eps)

    def _layers(
        self,
        x: np.ndarray,
        mask: np.ndarray,
        attention: AttentionFn,
        start: int,
        stop: int | None = None,
        kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
    ) -> np.ndarray:
        """Encoder layers ``start`` to ``stop`` (default: the last) on hidden states x (B, T,
        hidden); each layer's (q, k, v) appended to ``kept`` if given."""
        w = self.w
        scale = self.d_head ** (-0.25)
        for i in range(start, self.layers if stop is None else stop):
            p = f"encoder.layer.{i}."
            q = self._split(self._linear(x, p + "attention.self.query")) * scale
            k = self._split(self._linear(x, p + "attention.self.key")) * scale
            v = self._split(self._linear(x, p + "attention.self.value"))
            if kept is not None:
                kept.append((q, k, v))
            ctx = attention(i, q, k, v, mask).transpose(0, 2, 1, 3).reshape(x.shape)
            h = self._linear(ctx, p + "attention.output.dense") + x
            x = _layer_norm(
                h, w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"], self.eps,
            )  # fmt: skip
            f = self._linear(_gelu(self._linear(x, p + "intermediate.dense")), p + "output.dense")
            x = _layer_norm(
                f + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self.eps
            )
        return x

    def embed(
        self,
        texts: Sequence[str],
        attention: AttentionFn = exact_attention,
        max_tokens: int | None = None,
        batch: int = 64,
        prefix: FixedPrefix | None = None,
    ) -> np.ndarray:
        """Mean-pooled, L2-normalised sentence embeddings.

        Parameters
        ----------
        texts : sequence of str
        attention : AttentionFn
            The attention of every layer (default exact).
        max_tokens : int, optional
            Truncation length (sentence-transformers uses 256 for all-MiniLM-L6-v2).
        batch : int
            Sentences per forward pass.
        prefix : FixedPrefix, optional
            Layers computed once per batch of sentences and reused by later calls (see
            :meth:`forward`).

        Returns
        -------
        ndarray, shape (len(texts), hidden)
        """
        texts = list(texts)
        limit = min(max_tokens or self.max_tokens, self.max_tokens)
        lengths = [len(e.ids) for e in encode_batch(self.folder, self.tokenizer, texts, limit)]
        order = np.argsort(lengths, kind="stable")  # batches of similar length: little padding
        out = np.empty((len(texts), self.hidden))
        for start in range(0, len(texts), batch):
            idx = order[start : start + batch]
            ids, mask = self.tokenize([texts[i] for i in idx], max_tokens)
            hidden, _ = self.forward(ids, mask, attention, prefix=prefix)
            pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    def activations(self, text: str, max_tokens: int | None = None) -> Activations:
        """Every layer's per-head scaled Q, K, V of one sequence, and its embedding.

        Parameters
        ----------
        text : str
        max_tokens : int, optional
            Truncation length, special tokens included.

        Returns
        -------
        Activations
            q, k, v of shape (layers, heads, T, d_head); embedding (hidden,).
        """
        ids, mask = self.tokenize([text], max_tokens)
        hidden, kept = self.forward(ids, mask, keep=True)
        pooled = hidden[0].mean(axis=0)
        q, k, v = (np.stack([layer[j][0] for layer in kept]) for j in range(3))
        return Activations(q, k, v, pooled / np.linalg.norm(pooled))
