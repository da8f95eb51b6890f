"""The header of a ``.safetensors`` file, read without reading its tensors.

Format (https://huggingface.co/docs/safetensors): 8 bytes little-endian N, then N bytes of JSON
mapping each tensor name to its dtype, shape and data offsets, then the data. Reading the header
first lets a model's size be checked against the memory budget, and its tensors against its
config, before the file is hashed or loaded. ``safetensors.safe_open`` parses and checks the header
(the reader that loads the weights, so the two cannot disagree); the 8-byte length is checked here
first, because safetensors' own refusals of it do not say how long the file or header is.
"""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from safetensors import SafetensorError, safe_open

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
