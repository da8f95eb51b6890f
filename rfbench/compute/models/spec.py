"""A model folder checked before anything runs: its config against its weights' header, each
problem one :class:`~rfbench.compute.datasets.errors.ModelError` line naming the file and the field
(docs/experiments.md#attention, "Your own model").

The header of a ``.safetensors`` file (https://huggingface.co/docs/safetensors: 8 bytes
little-endian N, then N bytes of JSON mapping each tensor name to its dtype, shape and data
offsets, then the data) is read without reading its tensors, so that a model's size is checked
against the memory budget, and its tensors against its config, before the file is hashed or
loaded. ``safetensors.safe_open`` parses and checks the header (the reader that loads the
weights, so the two cannot disagree); the 8-byte length is checked here first, because
safetensors' own refusals of it do not say how long the file or header is.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from safetensors import SafetensorError, safe_open

from rfbench.compute.datasets.errors import ModelError

#: the largest config.json read (MiniLM's is 612 bytes)
CONFIG_LIMIT = 1 << 20
#: the largest size a config.json field may give (the header's shapes must match it anyway)
MAX_SIZE = 2**31 - 1
#: dtypes the encoder reads -> bytes per element (numpy has no bfloat16)
FLOAT_DTYPES = {"F16": 2, "F32": 4, "F64": 8}
_LAYER = re.compile(r"encoder\.layer\.(\d+)\.")


@dataclass(frozen=True)
class ModelSpec:
    """What the encoder of a checked folder will compute with.

    Attributes
    ----------
    folder : Path
    hidden, heads, layers, intermediate, max_positions, vocab : int
        From config.json, confirmed by the weights (``vocab``: rows of the word embeddings).
    eps : float
        LayerNorm epsilon.
    elements : int
        Elements of the float tensors the encoder loads.
    file_bytes : int
        Their bytes in the file.
    """

    folder: Path
    hidden: int
    heads: int
    layers: int
    intermediate: int
    max_positions: int
    vocab: int
    eps: float
    elements: int
    file_bytes: int

    @property
    def d_head(self) -> int:
        """Size of one head."""
        return self.hidden // self.heads

    def load_bytes(self) -> int:
        """Peak bytes of loading the weights: the file's arrays, a float64 copy (the extraction)
        and a float32 copy (the swap-in score) at once."""
        return self.file_bytes + 12 * self.elements


#: the safetensors library's own limit on the header size
MAX_HEADER = 100_000_000


class HeaderError(ValueError):
    """The file is not a well-formed safetensors file (the message says why, without the path)."""


@dataclass(frozen=True)
class Tensor:
    """One tensor as the header declares it."""

    dtype: str
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)


def file_kind(path: Path) -> str:
    """What ``path`` is, for messages: "a regular file", "a folder", "a FIFO", "missing", ….

    Follows symbolic links (a link to /dev/zero is "a character device").
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    for test, kind in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return kind
    return "not a regular file"


def read_header(path: Path) -> dict[str, Tensor]:
    """The tensors a safetensors file declares, checked against the file's size.

    Parameters
    ----------
    path : Path
        A regular file (the caller checks; see :func:`file_kind`).

    Returns
    -------
    dict
        Tensor name -> :class:`Tensor`, by name.

    Raises
    ------
    HeaderError
        A short file, a header longer than the file or than :data:`MAX_HEADER`, a header that
        is not JSON of tensors, offsets that do not match the shapes and dtypes, data that the
        header does not describe exactly, or no tensor at all.
    """
    size = path.stat().st_size
    with path.open("rb") as fh:
        prefix = fh.read(8)
    if len(prefix) < 8:
        raise HeaderError(f"{size} bytes, shorter than the 8-byte header length")
    n = int.from_bytes(prefix, "little")
    if n > min(MAX_HEADER, size - 8):
        raise HeaderError(f"declares a {n}-byte header in a {size}-byte file")
    try:
        with safe_open(path, framework="numpy") as fh:
            slices = {name: fh.get_slice(name) for name in fh.keys()}
            tensors = {k: Tensor(s.get_dtype(), tuple(s.get_shape())) for k, s in slices.items()}
    except SafetensorError as exc:
        raise HeaderError(_reason(str(exc), size - 8 - n)) from None
    if not tensors:
        raise HeaderError("its header is empty (no tensors)")
    return tensors


def _reason(refusal: str, data: int) -> str:
    """Why safetensors refused a header (its message, or before 0.5 its error's name), in this
    module's words (``data``: the bytes after the header)."""
    why = refusal.removeprefix("Error while deserializing header: ")
    if why.startswith(("incomplete metadata", "MetadataIncompleteBuffer")):
        return f"its header does not describe exactly the {data} bytes of data the file holds"
    if why.startswith(("invalid shape, data type, or offset", "InvalidOffset", "TensorInvalid")):
        return "a tensor's data offsets do not match its shape and dtype"
    if why.startswith(("invalid JSON", "invalid UTF-8", "InvalidHeader")):
        detail = why.partition(": ")[2].split(", expected one of")[0]  # not serde's long list
        return "its header is not JSON of tensors" + (f" ({detail})" if detail else "")
    return why


def regular_file(folder: Path, name: str, limit: int | None = None) -> Path:
    """``folder/name`` if it is a regular file (of at most ``limit`` bytes), else a ModelError
    saying what it is (a FIFO or a device is never opened, so never hangs)."""
    path = folder / name
    kind = file_kind(path)
    if kind != "a regular file":
        raise ModelError(f"model folder {folder}: {name} is {kind}, not a regular file")
    if limit is not None and path.stat().st_size > limit:
        raise ModelError(
            f"model folder {folder}: {name} has {path.stat().st_size} bytes; at most {limit} "
            "are read"
        )
    return path


def read_config(folder: Path) -> dict[str, Any]:
    """config.json as a dict (one ModelError line if it is not a JSON object)."""
    path = regular_file(folder, "config.json", CONFIG_LIMIT)
    try:
        config = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        why = " ".join(str(exc).split())[:80]
        raise ModelError(f"model folder {folder}: config.json is not JSON ({why})") from None
    except OSError as exc:
        raise ModelError(f"model folder {folder}: config.json: {exc.strerror}") from None
    if not isinstance(config, dict):
        raise ModelError(f"model folder {folder}: config.json is not a JSON object")
    return config


def _int(folder: Path, config: dict[str, Any], key: str, default: int | None = None) -> int:
    value = config.get(key, default)
    if value is None:
        raise ModelError(f"model folder {folder}: config.json has no {key}")
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_SIZE:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        raise ModelError(
            f"model folder {folder}: config.json {key} = {shown}; expected an integer from 1 to "
            f"{MAX_SIZE}"
        )
    return value


def _eps(folder: Path, config: dict[str, Any]) -> float:
    value = config.get("layer_norm_eps", 1e-12)
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:
        raise ModelError(
            f"model folder {folder}: config.json layer_norm_eps = {value!r}; expected a finite "
            "number > 0"
        )
    return float(value)


def _expected(
    hidden: int, inter: int, layers: int
) -> dict[str, tuple[tuple[int | None, ...], str]]:
    """Every tensor the encoder reads: its shape (None: any size, checked elsewhere) and the
    config fields the shape comes from."""
    h, hi = "hidden_size", "hidden_size, intermediate_size"
    out = {
        "embeddings.word_embeddings.weight": ((None, hidden), h),
        "embeddings.position_embeddings.weight": ((None, hidden), h),
        "embeddings.token_type_embeddings.weight": ((None, hidden), h),
        "embeddings.LayerNorm.weight": ((hidden,), h),
        "embeddings.LayerNorm.bias": ((hidden,), h),
    }
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):  # fmt: skip
            out[f"{p}{name}.weight"] = ((hidden, hidden), h)
            out[f"{p}{name}.bias"] = ((hidden,), h)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            out[f"{p}{name}.weight"] = ((hidden,), h)
            out[f"{p}{name}.bias"] = ((hidden,), h)
        out[f"{p}intermediate.dense.weight"] = ((inter, hidden), hi)
        out[f"{p}intermediate.dense.bias"] = ((inter,), hi)
        out[f"{p}output.dense.weight"] = ((hidden, inter), hi)
        out[f"{p}output.dense.bias"] = ((hidden,), h)
    return out


def _fits(shape: tuple[int, ...], expected: tuple[int | None, ...]) -> bool:
    return len(shape) == len(expected) and all(
        e is None or s == e for s, e in zip(shape, expected, strict=True)
    )


def _show(shape: tuple[int | None, ...]) -> str:
    return "[" + ", ".join("*" if s is None else str(s) for s in shape) + "]"


def check_config(folder: Path) -> ModelSpec:
    """Check ``folder``'s config.json against the header of its model.safetensors.

    Parameters
    ----------
    folder : Path
        A folder holding config.json and model.safetensors.

    Returns
    -------
    ModelSpec

    Raises
    ------
    ModelError
        One line naming the file and the field: a file that is not a regular file or too large,
        a field out of range (sizes < 1, heads not dividing the hidden size, a non-finite or
        non-positive eps, an activation other than GELU, non-absolute positions), a malformed
        safetensors header, or a weight that is missing, of another shape or not a float.
    """
    config = read_config(folder)
    hidden = _int(folder, config, "hidden_size")
    heads = _int(folder, config, "num_attention_heads")
    layers = _int(folder, config, "num_hidden_layers")
    if hidden % heads:
        raise ModelError(
            f"model folder {folder}: config.json num_attention_heads = {heads} does not divide "
            f"hidden_size = {hidden}"
        )
    eps = _eps(folder, config)
    for key, allowed in (("hidden_act", "gelu"), ("position_embedding_type", "absolute")):
        if config.get(key, allowed) != allowed:
            raise ModelError(
                f"model folder {folder}: config.json {key} = {config[key]!r}; rfbench's encoder "
                f"supports only {allowed!r}"
            )
    weights = regular_file(folder, "model.safetensors")
    try:
        raw = read_header(weights)
    except (HeaderError, OSError) as exc:
        raise ModelError(f"model folder {folder}: model.safetensors: {exc}") from None
    prefix = "bert." if any(name.startswith("bert.") for name in raw) else ""
    tensors = {k[len(prefix) :]: t for k, t in raw.items() if k.startswith(prefix)}
    present = {int(m[1]) for name in tensors if (m := _LAYER.match(name))}
    held = max(present) + 1 if present else 0
    if held != layers:
        raise ModelError(
            f"model folder {folder}: config.json num_hidden_layers = {layers}, but "
            f"model.safetensors holds {held} layers"
        )
    first = tensors.get("encoder.layer.0.intermediate.dense.weight", Tensor("F32", (1,)))
    inter = _int(folder, config, "intermediate_size", first.shape[0] or 1)
    for name, (shape, fields) in _expected(hidden, inter, layers).items():
        tensor = tensors.get(name)
        if tensor is None:
            raise ModelError(f"model folder {folder}: model.safetensors has no tensor {name!r}")
        if tensor.dtype not in FLOAT_DTYPES:
            raise ModelError(
                f"model folder {folder}: model.safetensors tensor {name!r} has dtype "
                f"{tensor.dtype}; expected one of {', '.join(FLOAT_DTYPES)}"
            )
        if not _fits(tensor.shape, shape) or 0 in tensor.shape:
            values = ", ".join(f"{f} = {config.get(f, inter)}" for f in fields.split(", "))
            raise ModelError(
                f"model folder {folder}: model.safetensors tensor {name!r} has shape "
                f"{list(tensor.shape)}, but config.json ({values}) needs {_show(shape)}"
            )
    rows = {k: tensors[f"embeddings.{k}_embeddings.weight"].shape[0]
            for k in ("word", "position")}  # fmt: skip
    vocab = _int(folder, config, "vocab_size", rows["word"])
    positions = _int(folder, config, "max_position_embeddings", 512)
    for key, value, row in (("vocab_size", vocab, "word"), ("max_position_embeddings", positions,
                                                            "position")):  # fmt: skip
        if value != rows[row]:
            raise ModelError(
                f"model folder {folder}: config.json {key} = {value}, but model.safetensors "
                f"tensor 'embeddings.{row}_embeddings.weight' has {rows[row]} rows"
            )
    loaded = [t for t in tensors.values() if t.dtype in FLOAT_DTYPES]
    return ModelSpec(
        folder=folder, hidden=hidden, heads=heads, layers=layers, intermediate=inter,
        max_positions=positions, vocab=vocab, eps=eps,
        elements=sum(t.size for t in loaded),
        file_bytes=sum(t.size * FLOAT_DTYPES[t.dtype] for t in loaded),
    )  # fmt: skip
