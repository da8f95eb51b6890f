"""What a user file holds once read, from its headers alone, checked against the memory budget.

A small file can declare a huge array: an ``.npz`` member compresses a 5 GiB array of zeros to a
few MB, an ``.npy`` header can declare any shape, a parquet file's metadata any row count. Before
rfbench reads a user file it adds up what the file declares — the shape and dtype in each
``.npy`` header (inside an ``.npz``, the first bytes of each member: the rest stays compressed),
the rows and columns of a parquet file's metadata, the lines and columns of a CSV — and refuses,
naming the file and the budget (:mod:`rfbench.compute.memlimits`), a file whose arrays cannot fit.
"""

from __future__ import annotations

import csv
import io
import math
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from rfbench.compute.datasets.errors import DataError
from rfbench.compute.memlimits import budget, human

NPY_MAGIC = b"\x93NUMPY"
#: numpy's own bound on a .npy header it reads without ``allow_pickle`` (numpy.lib.format)
MAX_HEADER = 10_000
#: float64 arrays alive while a file's values are checked and converted (the values as read,
#: their float64 copy, the working array of the range check and the read-only copy)
WORKING_COPIES = 4


@dataclass(frozen=True)
class NpyHeader:
    """The array an ``.npy`` header declares."""

    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class Declared:
    """What a file declares: its rows and columns (of the largest array), its values, and the
    bytes its arrays take once read."""

    rows: int
    columns: int
    values: int
    nbytes: int

    @property
    def need(self) -> int:
        """Bytes a load takes: the arrays as read and their float64 working copies."""
        return self.nbytes + 8 * WORKING_COPIES * self.values


def read_npy_header(fh: IO[bytes], where: str) -> NpyHeader:
    """The header of the ``.npy`` stream ``fh`` (at its start); a :class:`DataError` naming
    ``where`` for a header that is not one numpy reads safely, or an object array."""
    if fh.read(len(NPY_MAGIC)) != NPY_MAGIC:
        raise DataError(f"{where}: not a NumPy .npy file (no .npy header)")
    version = fh.read(2)
    if len(version) != 2 or version[0] not in (1, 2, 3):
        raise DataError(f"{where}: not a NumPy .npy file (unknown format version)")
    size_format = "<H" if version[0] == 1 else "<I"
    raw = fh.read(struct.calcsize(size_format))
    if len(raw) != struct.calcsize(size_format):
        raise DataError(f"{where}: not a NumPy .npy file (truncated header)")
    (length,) = struct.unpack(size_format, raw)
    if length > MAX_HEADER:
        raise DataError(
            f"{where}: its .npy header is {length} bytes, more than the {MAX_HEADER} numpy reads "
            "safely (a hand-made or damaged file); save the array again with numpy.save"
        )
    stream = io.BytesIO(raw + fh.read(length))  # numpy reads the length, then the header
    try:
        reader = (
            np.lib.format.read_array_header_1_0
            if version[0] == 1
            else np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = reader(stream, max_header_size=MAX_HEADER)
    except (ValueError, SyntaxError, TypeError) as exc:
        raise DataError(f"{where}: not a NumPy .npy file (bad header: {exc})") from None
    if dtype.hasobject:
        raise DataError(
            f"{where}: holds an object array (Python objects, stored as a pickle); "
            "rfbench never loads pickles: save plain numbers"
        )
    return NpyHeader(tuple(int(n) for n in shape), dtype)


def _of_headers(headers: list[NpyHeader], nbytes: int) -> Declared:
    values = sum(h.size for h in headers)
    largest = max(headers, key=lambda h: h.size, default=NpyHeader((0, 0), np.dtype(float)))
    rows = largest.shape[0] if largest.shape else 1
    columns = largest.size // rows if rows else 0
    declared_bytes = sum(h.size * h.dtype.itemsize for h in headers)
    return Declared(rows, columns, values, max(nbytes, declared_bytes))


def _npy(path: Path) -> Declared:
    with open(path, "rb") as fh:
        return _of_headers([read_npy_header(fh, f"data file {path}")], 0)


def _npz(path: Path) -> Declared:
    try:
        with zipfile.ZipFile(path) as archive:
            headers, expanded = [], 0
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                expanded += info.file_size
                with archive.open(info) as member:
                    where = f"data file {path}: member {info.filename}"
                    headers.append(read_npy_header(member, where))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError) as exc:
        raise DataError(f"data file {path}: not a NumPy .npz file ({exc})") from None
    return _of_headers(headers, expanded)


def _parquet(path: Path) -> Declared:
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, ValueError) as exc:  # pyarrow's errors are both
        raise DataError(f"data file {path}: not a readable parquet file ({exc})") from None
    rows, columns = int(meta.num_rows), int(meta.num_columns)
    return Declared(rows, columns, rows * columns, 8 * rows * columns)


def _csv(path: Path) -> Declared:
    lines, last = 0, b"\n"
    with open(path, "rb") as fh:
        head = fh.readline(1 << 20)
        while block := fh.read(1 << 20):
            lines += block.count(b"\n")
            last = block[-1:]
    rows = lines + (last != b"\n")
    try:
        columns = len(next(csv.reader([head.decode("utf-8", "replace")]), []))
    except csv.Error:
        columns = 1
    return Declared(rows, columns, rows * columns, 8 * rows * columns)


_READERS = {".npy": _npy, ".npz": _npz, ".parquet": _parquet, ".pq": _parquet, ".csv": _csv}


def declared(path: Path) -> Declared:
    """What the user file ``path`` declares (by its extension), read from its headers only."""
    return _READERS[path.suffix.lower()](path)


def check_fits(path: Path) -> Declared:
    """:func:`declared`, or a :class:`DataError` naming the file and the budget if its arrays
    cannot fit the memory of one job (rfbench.compute.memlimits.budget)."""
    found = declared(path)
    limit = budget(1)
    if found.need > limit.bytes:
        raise DataError(
            f"data file {path}: declares {found.values:,} values ({found.rows:,} rows × "
            f"{found.columns:,} columns), about {human(found.need)} once read, more than the "
            f"{human(limit.bytes)} budget ({limit.source}); use a smaller file"
        )
    return found
