"""A tiny synthetic BERT folder (random weights, a character WordPiece tokenizer) for fast tests
of model loading, checks and caches: hidden size 8, 2 heads, 2 layers, 64 positions."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import numpy as np

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def vocabulary() -> dict[str, int]:
    chars = string.ascii_lowercase + string.digits + string.punctuation
    tokens = SPECIAL + list(chars) + [f"##{c}" for c in chars]
    return {t: i for i, t in enumerate(tokens)}


def tokenizer_json(vocab: dict[str, int] | None = None) -> dict[str, Any]:
    """A BERT-style tokenizer.json: lower case, BERT pre-tokenizer, character WordPiece."""
    vocab = vocab or vocabulary()
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": vocab[t],
                "content": t,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for t in SPECIAL
        ],  # fmt: skip
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": True,
        },  # fmt: skip
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
            ],  # fmt: skip
            "pair": [
                {"Sequence": {"id": "A", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],  # fmt: skip
            "special_tokens": {
                t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")
            },
        },
        "decoder": None,
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": vocab,
        },  # fmt: skip
    }


def config_json(**changes: Any) -> dict[str, Any]:
    config = {
        "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
        "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 2,
        "intermediate_size": 16, "max_position_embeddings": 64, "layer_norm_eps": 1e-12,
        "type_vocab_size": 2, "vocab_size": len(vocabulary()),
    }  # fmt: skip
    config.update(changes)
    return config


def weights(
    seed: int = 0, hidden: int = 8, layers: int = 2, inter: int = 16, vocab: int | None = None
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def w(*shape: int) -> np.ndarray:
        return (0.5 * rng.standard_normal(shape)).astype(np.float32)

    out = {
        "embeddings.word_embeddings.weight": w(vocab or len(vocabulary()), hidden),
        "embeddings.position_embeddings.weight": w(64, hidden),
        "embeddings.token_type_embeddings.weight": w(2, hidden),
        "embeddings.LayerNorm.weight": 1 + w(hidden),
        "embeddings.LayerNorm.bias": w(hidden),
    }
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):  # fmt: skip
            out[f"{p}{name}.weight"], out[f"{p}{name}.bias"] = w(hidden, hidden), w(hidden)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            out[f"{p}{name}.weight"], out[f"{p}{name}.bias"] = 1 + w(hidden), w(hidden)
        out[f"{p}intermediate.dense.weight"], out[f"{p}intermediate.dense.bias"] = (
            w(inter, hidden), w(inter)
        )  # fmt: skip
        out[f"{p}output.dense.weight"], out[f"{p}output.dense.bias"] = w(hidden, inter), w(hidden)
    return out


def make_model(
    folder: Path,
    config: dict[str, Any] | None = None,
    tensors: dict[str, np.ndarray] | None = None,
    tokenizer: dict[str, Any] | None = None,
) -> Path:
    """Write a tiny BERT folder (defaults: :func:`config_json`, :func:`weights`,
    :func:`tokenizer_json`)."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config or config_json()))
    save_file(tensors if tensors is not None else weights(), str(folder / "model.safetensors"))
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer or tokenizer_json()))
    return folder
