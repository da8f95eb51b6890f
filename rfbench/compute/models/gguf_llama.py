"""A Llama-family GGUF file read into float32 weights, a config and a ``tokenizers`` tokenizer.

docs/experiments.md#language-model. GGUF (llama.cpp's format) holds quantised weight matrices
(dequantised here by the ``gguf`` package to float32, shape (out, in) as a torch ``Linear``), the
model's hyperparameters as ``llama.*`` fields and its byte-level BPE vocabulary and merges as
``tokenizer.ggml.*`` fields. Two facts of the format matter for the forward pass:

- llama.cpp permutes the rows of the query and key matrices of each head so that rotary
  positions rotate *adjacent* pairs (2i, 2i+1) of a head's dimensions (the GPT-J convention), not
  the halves (i, i + d/2) of the Hugging Face checkpoint; the config records ``rope_pairs =
  "adjacent"`` and rfbench.compute.models.llama rotates accordingly;
- the ``smollm`` pre-tokenizer (``tokenizer.ggml.pre``) splits every digit on its own, then
  applies the GPT-2 byte-level split; the 17 control tokens (token type 3) are special tokens.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np

from rfbench.compute.datasets.errors import ModelError

#: GGUF token type of a control (special) token
CONTROL = 3
#: the pre-tokenizers this reader rebuilds (tokenizer.ggml.pre)
PRE_TOKENIZERS = ("smollm",)


def _field(reader: Any, path: Path, key: str) -> Any:
    field = reader.fields.get(key)
    if field is None:
        raise ModelError(f"model file {path}: no GGUF field {key}")
    return field.contents()


def _open(path: Path) -> Any:
    """A GGUFReader of a llama model with a tokenizer this module rebuilds (else ModelError)."""
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as exc:  # noqa: BLE001 - any unreadable file is one line
        raise ModelError(f"model file {path}: not a GGUF file ({exc})") from None
    arch = _field(reader, path, "general.architecture")
    if arch != "llama":
        raise ModelError(f"model file {path}: architecture {arch!r}, not 'llama'")
    pre = _field(reader, path, "tokenizer.ggml.pre")
    if _field(reader, path, "tokenizer.ggml.model") != "gpt2" or pre not in PRE_TOKENIZERS:
        raise ModelError(f"model file {path}: tokenizer {pre!r} is not one rfbench rebuilds")
    return reader


def _config(reader: Any, path: Path) -> dict[str, Any]:
    """The config of :func:`read_gguf_llama` from the header's fields."""
    hidden = int(_field(reader, path, "llama.embedding_length"))
    heads = int(_field(reader, path, "llama.attention.head_count"))
    embd = next(t for t in reader.tensors if t.name == "token_embd.weight")
    config = {
        "architecture": "llama",
        "hidden": hidden,
        "heads": heads,
        "kv_heads": int(_field(reader, path, "llama.attention.head_count_kv")),
        "layers": int(_field(reader, path, "llama.block_count")),
        "intermediate": int(_field(reader, path, "llama.feed_forward_length")),
        "vocab": int(embd.shape[-1]),
        "context": int(_field(reader, path, "llama.context_length")),
        "rope_base": float(_field(reader, path, "llama.rope.freq_base")),
        "rope_dims": int(_field(reader, path, "llama.rope.dimension_count")),
        "rope_pairs": "adjacent",
        "eps": float(np.float32(_field(reader, path, "llama.attention.layer_norm_rms_epsilon"))),
        "tied_embeddings": not any(t.name == "output.weight" for t in reader.tensors),
        "bos": int(_field(reader, path, "tokenizer.ggml.bos_token_id")),
        "eos": int(_field(reader, path, "tokenizer.ggml.eos_token_id")),
    }
    if config["rope_dims"] != hidden // heads:
        raise ModelError(f"model file {path}: partial rotary dimensions are not supported")
    return config


@functools.lru_cache(maxsize=2)
def read_gguf_config(path: Path) -> dict[str, Any]:
    """The config of a llama GGUF file (as :func:`read_gguf_llama`), from its header only
    (memoised per path: copy it before changing it)."""
    return _config(_open(path), path)


def read_gguf_llama(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any], bytes]:
    """Read a Llama GGUF file.

    Parameters
    ----------
    path : Path
        A GGUF file of architecture ``llama`` with a ``gpt2`` (byte-level BPE) tokenizer.

    Returns
    -------
    tensors : dict of str to ndarray
        Every weight in float32 under its GGUF name (``token_embd.weight`` (vocab, hidden),
        ``blk.{i}.attn_q.weight`` (out, in), ..., ``output_norm.weight``).
    config : dict
        ``hidden``, ``heads``, ``kv_heads``, ``layers``, ``intermediate``, ``vocab``,
        ``context``, ``rope_base``, ``rope_pairs``, ``eps``, ``tied_embeddings``, ``bos``,
        ``eos``.
    tokenizer : bytes
        A ``tokenizer.json`` for the ``tokenizers`` library.

    Raises
    ------
    ModelError
        Not a llama GGUF file, or a tokenizer this reader does not rebuild.
    """
    from gguf.quants import dequantize

    reader = _open(path)
    tensors = {
        t.name: np.ascontiguousarray(dequantize(t.data, t.tensor_type), dtype=np.float32)
        for t in reader.tensors
    }
    return tensors, _config(reader, path), _tokenizer(reader, path)


def _tokenizer(reader: Any, path: Path) -> bytes:
    tokens = list(_field(reader, path, "tokenizer.ggml.tokens"))
    types = list(_field(reader, path, "tokenizer.ggml.token_type"))
    merges = list(_field(reader, path, "tokenizer.ggml.merges"))
    return tokenizer_json(tokens, types, merges)


def read_gguf_tokenizer(path: Path) -> bytes:
    """The tokenizer.json of a llama GGUF file (as :func:`read_gguf_llama`), from its header."""
    return _tokenizer(_open(path), path)


def tokenizer_json(tokens: list[str], types: list[int], merges: list[str]) -> bytes:
    """The ``tokenizers`` JSON of a GPT-2-style byte-level BPE with digits split one by one
    (llama.cpp's ``smollm`` pre-tokenizer) and no tokens added around the text.

    Parameters
    ----------
    tokens : list of str
        The vocabulary in id order (byte-level characters, as in GGUF).
    types : list of int
        GGUF token types; :data:`CONTROL` marks a special token.
    merges : list of str
        "a b" merge rules in priority order.

    Returns
    -------
    bytes
    """
    special = [
        {"id": i, "content": tok, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for i, (tok, kind) in enumerate(zip(tokens, types, strict=True))
        if kind == CONTROL
    ]  # fmt: skip
    spec = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": special,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Digits", "individual_digits": True},
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": True,
                    "use_regex": True,
                },
            ],
        },  # fmt: skip
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },  # fmt: skip
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": {tok: i for i, tok in enumerate(tokens)},
            "merges": merges,
        },
    }
    return (json.dumps(spec, ensure_ascii=False, sort_keys=True) + "\n").encode()
