"""The user's own data: labelled tables for ``classify`` and point sets for ``gram``/``pointwise``.

A user file is named by a *file reference* ``PATH[#TARGET][@SHA256PREFIX]``
(docs/architecture.md#cli): the sha256 prefix keys the job cache on the file's content and is
checked on every load. Every problem is one :class:`DataError` line naming the file; a file is
checked against the memory budget from its headers before it is read
(:mod:`rfbench.compute.datasets.filesize`).
"""

from __future__ import annotations

import functools
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from rfbench.compute.datasets.cache import digest
from rfbench.compute.datasets.errors import DataError
from rfbench.compute.datasets.filesize import NPY_MAGIC, check_fits, declared
from rfbench.compute.datasets.preprocess import Dataset

TABLES = (".csv", ".parquet", ".pq")
ARRAYS = (".npy", ".npz")
SHA_CHARS = 16
_REF = re.compile(r"^(?P<path>.+?)(?:#(?P<target>[^@]+))?(?:@(?P<sha>[0-9a-f]{8,64}))?$")


def is_reference(name: str) -> bool:
    """Whether ``name`` refers to a user file (by its extension) rather than a registry set."""
    match = _REF.match(str(name))
    return bool(match) and Path(match["path"]).suffix.lower() in TABLES + ARRAYS


def parse(name: str) -> tuple[Path, str, str]:
    """``PATH[#TARGET][@SHA]`` -> (path, target or "", sha prefix or "")."""
    match = _REF.match(str(name))
    if not match or not is_reference(name):
        kinds = ", ".join(TABLES + ARRAYS)
        raise DataError(f"data file {name!r}: not a file reference (a path ending in {kinds})")
    return Path(match["path"]), match["target"] or "", match["sha"] or ""


def sha256(path: Path) -> str:
    """The sha256 of a file's bytes."""
    return digest(path)[0]


def reference(path: str | Path, target: str = "") -> str:
    """The pinned reference of an existing file: ``PATH[#TARGET]@SHA256PREFIX``."""
    path = Path(path)
    _check_exists(path)
    ref = f"{path}#{target}" if target else str(path)
    if not is_reference(ref):
        raise DataError(f"data file {path}: unsupported type; use {', '.join(TABLES + ARRAYS)}")
    # the header before the hash: a huge (or sparse) .npy is refused in a moment, not read whole
    if path.suffix.lower() in ARRAYS:
        _check_kind(path)
    if path.suffix.lower() == ".npy":
        check_fits(path)
    elif path.suffix.lower() == ".npz":
        declared(path)  # every member's header, a bad one refused (an experiment sizes its own)
    return f"{ref}@{sha256(path)[:SHA_CHARS]}"


def declared_shape(name: str) -> tuple[int, int]:
    """(rows, columns) a user file declares in its headers (the largest array of an ``.npz``),
    without reading its values (:mod:`rfbench.compute.datasets.filesize`)."""
    path, _, _ = parse(name)
    _check_exists(path)
    found = declared(path)
    return found.rows, found.columns


def pinned(name: str) -> str:
    """``name`` as a pinned reference: a config's ``PATH[#TARGET]`` gets its file's sha256
    prefix (:func:`reference`), so the job cache keys on the file's content as it does for
    ``--data`` (a changed file used to be read from the cache of its old content); a pinned
    reference or a registry name is unchanged."""
    if not is_reference(name):
        return name
    path, target, sha = parse(name)
    return name if sha else reference(path, target)


def _check_exists(path: Path) -> None:
    if path.is_dir():
        raise DataError(f"data file {path}: is a folder; give a file in it")
    if not path.is_file():
        raise DataError(f"data file {path}: no such file")


def _verified(name: str) -> tuple[Path, str, str]:
    path, target, sha = parse(name)
    _check_exists(path)
    if path.suffix.lower() == ".npy":
        check_fits(path)  # its header before its hash (a huge sparse file: not read whole)
    if sha:
        got = sha256(path)
        if not got.startswith(sha):
            raise DataError(
                f"data file {path}: its sha256 {got[:SHA_CHARS]}… is not the {sha} these "
                "results were computed from (the file changed; run again with --data)"
            )
    return path, target, sha


def _read_table(path: Path) -> pd.DataFrame:
    check_fits(path)
    kind = "CSV" if path.suffix.lower() == ".csv" else "parquet"
    try:
        frame = pd.read_csv(path) if kind == "CSV" else pd.read_parquet(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # pyarrow errors are ValueErrors
        raise DataError(f"data file {path}: not a readable {kind} file ({_why(exc)})") from None
    except (TypeError, KeyError, IndexError, AttributeError) as exc:
        # pandas rebuilding its frame from the file's "pandas" metadata (a parquet key)
        raise DataError(
            f"data file {path}: its pandas metadata is broken ({type(exc).__name__}: "
            f"{_why(exc)}); write the file again, e.g. with DataFrame.to_parquet"
        ) from None
    if len(frame) == 0:
        raise DataError(f"data file {path}: has no rows (only a header); give at least one row")
    return frame


def _numeric(path: Path, frame: pd.DataFrame) -> np.ndarray:
    """The frame's columns as a finite float64 matrix, or a DataError naming the bad column."""
    bad = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if bad:
        raise DataError(f"data file {path}: column {bad[0]!r} is not numeric")
    complex_ = [c for c in frame.columns if pd.api.types.is_complex_dtype(frame[c])]
    if complex_:
        raise DataError(f"data file {path}: column {complex_[0]!r} is complex; expected reals")
    return _finite(path, frame.to_numpy(dtype=np.float64), "table", list(frame.columns))


#: the largest magnitude whose square (a squared norm, a variance) float64 still holds
LARGEST_VALUE = float(np.sqrt(np.finfo(np.float64).max) / 1e4)


def _finite(path: Path, X: np.ndarray, what: str, columns: list | None = None) -> np.ndarray:
    """``X`` as a 2-D real float64 matrix whose squares are finite, or a DataError naming the
    first bad cell: its file line (1-based, counting the header) for a CSV, else its row (1-based),
    and its column."""
    if np.iscomplexobj(X):
        raise DataError(f"data file {path}: {what} is complex ({X.dtype}); expected reals")
    if X.dtype.kind in "mM":
        raise DataError(
            f"data file {path}: {what} holds {X.dtype} values (times or durations, not "
            "numbers); convert them to numbers (e.g. seconds) first"
        )
    if not np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_:
        raise DataError(f"data file {path}: {what} has dtype {X.dtype}; expected numbers")
    X = X.astype(np.float64)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise DataError(
            f"data file {path}: {what} has shape {X.shape}; expected (points, features)"
        )
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(X) <= LARGEST_VALUE)
    if bad.any():
        rows, cols = np.nonzero(bad)
        row, col = int(rows[0]), int(cols[0])
        value = X[row, col]
        if np.isfinite(value):
            why = f"too large ({value:.3g}: its square overflows float64; rescale the data)"
        else:
            why = "NaN or infinite"
        line = f"line {row + 2}" if path.suffix.lower() == ".csv" else f"row {row + 1}"
        column = repr(columns[col]) if columns is not None else str(col + 1)
        where = f"{line}, column {column}"
        more = len(np.unique(rows)) - 1
        raise DataError(
            f"data file {path}: {what} has a value {why} at {where}"
            f"{f' (and {more} more row(s))' if more else ''}"
        )
    return X


def _why(exc: BaseException) -> str:
    """An exception's message on one line, cut at a word and marked when long."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 120 else text[:120].rsplit(" ", 1)[0] + "…"


def _check_kind(path: Path) -> None:
    """Refuse an .npz that is no zip archive (one line; an .npy without its header is refused by
    its header's reader, rfbench.compute.datasets.filesize)."""
    if path.suffix.lower() == ".npz" and not zipfile.is_zipfile(path):
        with open(path, "rb") as f:
            head = f.read(len(NPY_MAGIC))
        kind = "a .npy array" if head == NPY_MAGIC else "not a zip archive"
        raise DataError(f"data file {path}: not a NumPy .npz file ({kind})")


def _arrays(path: Path) -> dict[str, np.ndarray]:
    suffix = path.suffix.lower()
    if suffix in TABLES:
        return {"X": _numeric(path, _read_table(path))}
    _check_kind(path)
    check_fits(path)  # also refuses object arrays and oversized headers by what they are
    try:
        loaded = np.load(path, allow_pickle=False)
        if isinstance(loaded, np.ndarray):
            return {"X": loaded}
        with loaded:
            return {key: np.asarray(loaded[key]) for key in loaded.files}
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise DataError(
                f"data file {path}: holds an object array (Python objects, stored as a pickle); "
                "rfbench never loads pickles: save plain numbers"
            ) from None
        raise DataError(f"data file {path}: not a NumPy {suffix} file ({_why(exc)})") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"data file {path}: not a NumPy {suffix} file ({_why(exc)})") from None


@functools.lru_cache(maxsize=8)
def load_points(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(queries, keys) of a point file: Q and K from an ``.npz`` holding both, else X twice.

    ``.npy`` holds X; ``.npz`` holds X, or Q and K (same width); a table's numeric columns are X.
    """
    path, target, _ = _verified(name)
    if target:
        raise DataError(f"data file {path}: '#{target}' (a label column) applies to classify only")
    arrays = _arrays(path)
    Q, K = either_case(path, arrays, "Q"), either_case(path, arrays, "K")
    if Q is not None and K is not None:
        Q = _finite(path, Q, "Q")
        K = _finite(path, K, "K")
        if Q.shape[1] != K.shape[1]:
            raise DataError(f"data file {path}: Q has {Q.shape[1]} features but K has {K.shape[1]}")
        return _readonly(Q), _readonly(K)
    X = either_case(path, arrays, "X")
    if X is None:
        held = ", ".join(sorted(arrays)) or "no arrays"
        raise DataError(f"data file {path}: holds {held}; expected X, or Q and K")
    X = _readonly(_finite(path, X, "X"))
    return X, X


def either_case(path: Path, arrays: dict[str, np.ndarray], name: str) -> np.ndarray | None:
    """The array called ``name`` in either case (``q`` or ``Q``), None if there is none.

    Raises
    ------
    DataError
        The file holds both spellings (which one is meant is ambiguous).
    """
    found = [key for key in dict.fromkeys((name.lower(), name.upper())) if key in arrays]
    if len(found) > 1:
        raise DataError(f"data file {path}: holds both {found[0]!r} and {found[1]!r}; keep one")
    return arrays[found[0]] if found else None


def _readonly(X: np.ndarray) -> np.ndarray:
    X = np.ascontiguousarray(X)
    X.setflags(write=False)
    return X


@functools.lru_cache(maxsize=8)
def load_table(name: str) -> Dataset:
    """A labelled table ``PATH#TARGET``: the target column as classes, the rest numeric features."""
    path, target, sha = _verified(name)
    if path.suffix.lower() not in TABLES:
        raise DataError(f"data file {path}: classification needs a table ({', '.join(TABLES)})")
    frame = _read_table(path)
    if not target:
        raise DataError(f"data file {path}: name its label column (--target COLUMN)")
    if target not in frame.columns:
        raise DataError(
            f"data file {path}: no column {target!r}; columns: {', '.join(map(str, frame.columns))}"
        )
    labels = frame[target]
    if labels.isna().any():
        raise DataError(f"data file {path}: column {target!r} has missing labels")
    features = frame.drop(columns=[target])
    if features.shape[1] == 0:
        raise DataError(f"data file {path}: no feature columns besides {target!r}")
    X = _numeric(path, features)
    classes, y = np.unique(labels.astype(str).to_numpy(), return_inverse=True)
    if len(classes) < 2:
        raise DataError(f"data file {path}: column {target!r} has a single class")
    if len(classes) == len(y):  # a continuous or an id column: no class is ever seen twice
        raise DataError(
            f"data file {path}: column {target!r} has a different value in each of its {len(y)} "
            "rows, so no class can be learnt; --target names a column of class labels"
        )
    meta = {"path": str(path), "sha256": sha256(path), "target": target, "user_file": True}
    return Dataset(
        name=str(name), X=X, y=y.astype(np.int64), feature_names=tuple(map(str, features.columns)),
        classes=tuple(classes.tolist()), metadata=meta,
    )  # fmt: skip
