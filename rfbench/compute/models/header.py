"""The header of a ``.safetensors`` file, read without reading its tensors.

Format (https://huggingface.co/docs/safetensors): 8 bytes little-endian N, then N bytes of JSON
mapping each tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into
the data that follows; an optional ``"__metadata__"`` entry holds strings), then the data. Reading
the header first lets a model's size be checked against the memory budget, and its tensors
against its config, before the file is hashed or loaded.
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path

#: bytes per element of each safetensors dtype
ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
            "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1, "F8_E4M3": 1,
            "F8_E5M2": 1}  # fmt: skip
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
        Tensor name -> :class:`Tensor`, in the header's order.

    Raises
    ------
    HeaderError
        A short header, a header that is not a JSON object of tensors, an unknown dtype, a bad
        shape, offsets that do not match the shape, data that the header does not describe
        exactly, or no tensor at all.
    """
    size = path.stat().st_size
    with path.open("rb") as fh:
        prefix = fh.read(8)
        if len(prefix) < 8:
            raise HeaderError(f"{size} bytes, shorter than the 8-byte header length")
        n = int.from_bytes(prefix, "little")
        if n > min(MAX_HEADER, size - 8):
            raise HeaderError(f"declares a {n}-byte header in a {size}-byte file")
        raw = fh.read(n)
    try:
        entries = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise HeaderError("its header is not JSON") from None
    if not isinstance(entries, dict):
        raise HeaderError("its header is not a JSON object")
    entries.pop("__metadata__", None)
    if not entries:
        raise HeaderError("its header is empty (no tensors)")
    tensors, end = {}, 0
    for name, entry in entries.items():
        tensors[name] = tensor = _tensor(name, entry)
        begin, stop = entry["data_offsets"]
        if stop - begin != tensor.size * ITEMSIZE[tensor.dtype]:
            raise HeaderError(f"tensor {name!r}: data offsets do not match its shape and dtype")
        end = max(end, stop)
    if end != size - 8 - n:
        raise HeaderError(
            f"its header describes {end} bytes of data, the file holds {size - 8 - n}"
        )
    return tensors


def _tensor(name: str, entry: object) -> Tensor:
    if not isinstance(entry, dict):
        raise HeaderError(f"tensor {name!r}: not a JSON object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in ITEMSIZE:
        raise HeaderError(f"tensor {name!r}: unknown dtype {dtype!r}")
    if not isinstance(shape, list) or not all(_natural(x) for x in shape):
        raise HeaderError(f"tensor {name!r}: shape {shape!r} is not a list of sizes")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(_natural(x) for x in offsets)
        or offsets[0] > offsets[1]
    ):
        raise HeaderError(f"tensor {name!r}: data_offsets {offsets!r} are not [begin, end]")
    return Tensor(dtype, tuple(shape))


def _natural(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0
