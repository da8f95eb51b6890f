"""A small numpy decoder of the Llama family whose attention can be replaced, layer by layer.

docs/experiments.md#language-model. Pre-norm blocks (Touvron et al., 2023, arXiv 2302.13971,
§2.2): RMSNorm (Zhang & Sennrich, 2019), rotary positions (Su et al., 2021, arXiv 2104.09864,
Eq. 34) on adjacent pairs (2i, 2i+1) of each head (GGUF's layout, rfbench.compute.models.
gguf_llama), grouped-query attention (Ainslie et al., 2023, arXiv 2305.13245: ``heads`` query
heads share ``kv_heads`` key/value heads, query head h reading key/value head h // (heads /
kv_heads)), a SwiGLU feed-forward (Shazeer, 2020, arXiv 2002.05202) and tied input/output
embeddings. One sequence at a time, causal, in float32 by default.

Queries and keys reach an attention function already rotated and scaled by d_head^(-1/4) each, so
qᵀk is the logit (the convention of rfbench.compute.models.bert and of the attention study).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: an attention replacement: (layer, q, k, v) -> output, causal; q (heads, T, d_head) and k
#: (kv_heads, T, d_head) rotated and scaled by d_head^(-1/4), v (kv_heads, T, d_head); query head
#: h reads key/value head h // (heads / kv_heads); returns (heads, T, d_head)
LMAttentionFn = Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def softmax_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, visible: np.ndarray
) -> np.ndarray:
    """softmax(qkᵀ) v over the keys ``visible`` (bool, broadcastable to (B, heads, T, T)) marks."""
    logits = q @ np.swapaxes(k, -1, -2)
    logits = np.where(visible, logits, -np.inf)
    logits -= logits.max(axis=-1, keepdims=True)
    weights = np.exp(logits)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v


def grouped(q: np.ndarray, kv_heads: int) -> np.ndarray:
    """Query heads (heads, T, d) as (kv_heads, group, T, d): the query heads of each key/value
    head together."""
    h, t, d = q.shape
    return q.reshape(kv_heads, h // kv_heads, t, d)


def causal_softmax(q: np.ndarray, k: np.ndarray, v: np.ndarray, visible: np.ndarray | None = None):
    """Softmax attention of grouped query heads over the keys each row sees.

    Parameters
    ----------
    q : ndarray, shape (heads, T, d)
    k, v : ndarray, shape (kv_heads, T, d)
    visible : ndarray of bool, shape (T, T), optional
        Which keys each query row attends (default: the causal mask, keys 0..i).

    Returns
    -------
    ndarray, shape (heads, T, d)
    """
    hkv, t, _ = k.shape
    if visible is None:
        visible = np.tri(t, dtype=bool)
    # (kv_heads, group, T, d): each key/value head against its group of query heads
    return softmax_attention(grouped(q, hkv), k[:, None], v[:, None], visible).reshape(q.shape)


def exact_attention(layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The model's own attention: causal softmax (an :data:`LMAttentionFn`; ``layer`` unused)."""
    return causal_softmax(q, k, v)


def rope_tables(t: int, d: int, base: float, dtype: type = np.float32):
    """cos and sin of the rotary angles p·base^(-2i/d), p < t, i < d/2: each (t, d/2)."""
    inv = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angle = np.arange(t, dtype=np.float64)[:, None] * inv[None]
    return np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)


def rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairs: str = "adjacent") -> np.ndarray:
    """Rotary positions on each head of x (heads, T, d): dimensions (2i, 2i+1) rotated together
    (``adjacent``, GGUF's layout) or (i, i + d/2) (``halves``, the Hugging Face layout)."""
    if pairs == "adjacent":
        x0, x1 = x[..., 0::2], x[..., 1::2]
    else:
        half = x.shape[-1] // 2
        x0, x1 = x[..., :half], x[..., half:]
    r0, r1 = x0 * cos - x1 * sin, x0 * sin + x1 * cos
    if pairs == "adjacent":
        return np.stack([r0, r1], axis=-1).reshape(x.shape)
    return np.concatenate([r0, r1], axis=-1)


class Llama:
    """A Llama-family decoder (module docstring) from float weights under GGUF names.

    Parameters
    ----------
    tensors : dict of str to ndarray
        ``token_embd.weight`` (vocab, hidden); per layer i ``blk.{i}.attn_norm.weight``,
        ``attn_q`` (hidden, hidden), ``attn_k``/``attn_v`` (kv_heads·d, hidden), ``attn_output``
        (hidden, hidden), ``ffn_norm``, ``ffn_gate``/``ffn_up`` (intermediate, hidden),
        ``ffn_down`` (hidden, intermediate); ``output_norm.weight``; ``output.weight`` unless
        the embeddings are tied.
    config : dict
        As written by rfbench.compute.models.gguf_llama.read_gguf_llama.
    dtype : numpy dtype
        Of the weights and the computation (float32 default; float64 for tests).
    rope_pairs : {"adjacent", "halves"}, optional
        Overrides the config's rotary convention (the wrong one is a sanity test).
    """

    def __init__(
        self,
        tensors: dict[str, np.ndarray],
        config: dict[str, Any],
        dtype: type = np.float32,
        rope_pairs: str | None = None,
    ) -> None:
        self.config = dict(config)
        self.dtype = np.dtype(dtype).type
        self.w = {name: np.ascontiguousarray(a, dtype=self.dtype) for name, a in tensors.items()}
        self.layers, self.heads = int(config["layers"]), int(config["heads"])
        self.kv_heads = int(config["kv_heads"])
        self.d_head = int(config["hidden"]) // self.heads
        self.eps = float(config["eps"])
        self.rope_pairs = rope_pairs or config.get("rope_pairs", "adjacent")
        self.out = self.w.get("output.weight", self.w["token_embd.weight"])

    @classmethod
    def from_folder(cls, folder: Path, dtype: type = np.float32, **kw: Any) -> Llama:
        """Read ``config.json`` and ``model.safetensors`` of a converted model folder."""
        from safetensors.numpy import load_file

        config = json.loads((folder / "config.json").read_text())
        return cls(load_file(str(folder / "model.safetensors")), config, dtype, **kw)

    # ------------------------------------------------------------------ blocks

    def _norm(self, x: np.ndarray, weight: np.ndarray) -> np.ndarray:
        ms = np.mean(np.square(x), axis=-1, keepdims=True)
        return x / np.sqrt(ms + self.dtype(self.eps)) * weight

    def qkv(self, layer: int, x: np.ndarray, rope: tuple[np.ndarray, np.ndarray]):
        """Layer ``layer``'s rotated, scaled queries (heads, T, d) and keys and values (kv_heads,
        T, d) from its input hidden states x (T, hidden)."""
        p, t = f"blk.{layer}.", x.shape[0]
        h = self._norm(x, self.w[p + "attn_norm.weight"])
        scale = self.dtype(self.d_head**-0.25)
        q = (h @ self.w[p + "attn_q.weight"].T).reshape(t, self.heads, self.d_head)
        k = (h @ self.w[p + "attn_k.weight"].T).reshape(t, self.kv_heads, self.d_head)
        v = (h @ self.w[p + "attn_v.weight"].T).reshape(t, self.kv_heads, self.d_head)
        cos, sin = rope
        q = rotate(q.transpose(1, 0, 2), cos, sin, self.rope_pairs) * scale
        k = rotate(k.transpose(1, 0, 2), cos, sin, self.rope_pairs) * scale
        return q, k, np.ascontiguousarray(v.transpose(1, 0, 2))

    def block(
        self, layer: int, x: np.ndarray, attention: LMAttentionFn, rope, keep: list | None = None
    ) -> np.ndarray:
        """One decoder block on hidden states x (T, hidden); ``keep`` collects its (q, k, v)."""
        p, t = f"blk.{layer}.", x.shape[0]
        q, k, v = self.qkv(layer, x, rope)
        if keep is not None:
            keep.append((q, k, v))
        att = np.asarray(attention(layer, q, k, v), dtype=self.dtype)
        x = x + att.transpose(1, 0, 2).reshape(t, -1) @ self.w[p + "attn_output.weight"].T
        h = self._norm(x, self.w[p + "ffn_norm.weight"])
        gate = h @ self.w[p + "ffn_gate.weight"].T
        up = h @ self.w[p + "ffn_up.weight"].T
        with np.errstate(over="ignore"):
            silu = gate / (1 + np.exp(-gate))
        return x + (silu * up) @ self.w[p + "ffn_down.weight"].T

    def rope(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """The rotary tables of a sequence of ``t`` tokens."""
        return rope_tables(t, self.d_head, float(self.config["rope_base"]), self.dtype)

    # ------------------------------------------------------------------ passes

    def hidden_states(
        self,
        ids: np.ndarray,
        attention: LMAttentionFn = exact_attention,
        start: int = 0,
        x: np.ndarray | None = None,
        keep: list | None = None,
        inputs: list | None = None,
    ) -> np.ndarray:
        """The final hidden states (T, hidden), normalised, of token ids (T,).

        Parameters
        ----------
        ids : ndarray of int, shape (T,)
        attention : LMAttentionFn
            Every layer's attention from ``start`` on.
        start : int
            First layer computed; ``x`` is then its input (from an earlier pass's ``inputs``).
        x : ndarray, shape (T, hidden), optional
        keep : list, optional
            Collects each computed layer's (q, k, v).
        inputs : list, optional
            Collects each computed layer's input hidden states (T, hidden).
        """
        if x is None:
            x = self.w["token_embd.weight"][np.asarray(ids)]
        rope = self.rope(x.shape[0])
        for layer in range(start, self.layers):
            if inputs is not None:
                inputs.append(x)
            x = self.block(layer, x, attention, rope, keep)
        return self._norm(x, self.w["output_norm.weight"])

    def logits(self, hidden: np.ndarray) -> np.ndarray:
        """Next-token logits (T, vocab) of final hidden states (T, hidden)."""
        return hidden @ self.out.T

    def token_nll(self, hidden: np.ndarray, targets: np.ndarray, chunk: int = 128) -> np.ndarray:
        """−log p(target_i | tokens ≤ i) of each row i of final hidden states (n, hidden), in
        float64 from float logits, computed ``chunk`` rows at a time: (n,)."""
        out = np.empty(len(targets))
        for s in range(0, len(targets), chunk):
            z = self.logits(hidden[s : s + chunk]).astype(np.float64)
            top = z.max(axis=1)
            lse = top + np.log(np.exp(z - top[:, None]).sum(axis=1))
            out[s : s + chunk] = lse - z[np.arange(len(z)), targets[s : s + chunk]]
        return out

    def nll(self, ids: np.ndarray, attention: LMAttentionFn = exact_attention) -> np.ndarray:
        """−log p(ids[i+1] | ids[..i]) for i < T − 1: (T − 1,)."""
        ids = np.asarray(ids)
        hidden = self.hidden_states(ids, attention)
        return self.token_nll(hidden[:-1], ids[1:])


def memory_bytes(config: dict[str, Any], tokens: int, itemsize: int = 4) -> int:
    """Peak bytes of a loaded decoder running one sequence of ``tokens``: the weights (read and
    cast: twice), every layer's input kept (a one-layer swap restarts there), a few (heads, T, T)
    attention matrices and a chunk of logits."""
    hidden, inter, layers = config["hidden"], config["intermediate"], config["layers"]
    kv = config["kv_heads"] * hidden // config["heads"]
    per_layer = 2 * hidden * hidden + 2 * kv * hidden + 3 * hidden * inter + 2 * hidden
    weights = per_layer * layers + config["vocab"] * hidden + hidden
    acts = layers * tokens * hidden + 4 * config["heads"] * tokens * tokens + 4 * tokens * inter
    return itemsize * (2 * weights + acts) + 8 * 128 * config["vocab"] * 2
