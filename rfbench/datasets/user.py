"""The user's own data: labelled tables for ``classify`` and point sets for ``gram``/``pointwise``.

A user file is named like a registry data set, by a *file reference*
``PATH[#TARGET][@SHA256PREFIX]``: the path of a ``.csv``/``.parquet`` table (``#TARGET`` names
its label column) or of a ``.npy``/``.npz`` array file. The command line's ``--data`` adds the
file's sha256 prefix, so a job's key (and the job cache) changes with the file's content and the
results name the exact file they were computed from; the prefix is checked on every load, as the
registry's pins are. Every problem is one :class:`DataError` line naming the file.
"""

from __future__ import annotations

import functools
import hashlib
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from rfbench.datasets.dataset import Dataset
from rfbench.datasets.errors import DataError

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
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def reference(path: str | Path, target: str = "") -> str:
    """The pinned reference of an existing file: ``PATH[#TARGET]@SHA256PREFIX``."""
    path = Path(path)
    _check_exists(path)
    ref = f"{path}#{target}" if target else str(path)
    if not is_reference(ref):
        raise DataError(f"data file {path}: unsupported type; use {', '.join(TABLES + ARRAYS)}")
    return f"{ref}@{sha256(path)[:SHA_CHARS]}"


def _check_exists(path: Path) -> None:
    if not path.is_file():
        raise DataError(f"data file {path}: no such file")


def _verified(name: str) -> tuple[Path, str, str]:
    path, target, sha = parse(name)
    _check_exists(path)
    if sha:
        got = sha256(path)
        if not got.startswith(sha):
            raise DataError(
                f"data file {path}: its sha256 {got[:SHA_CHARS]}… is not the {sha} these "
                "results were computed from (the file changed; run again with --data)"
            )
    return path, target, sha


def _read_table(path: Path) -> pd.DataFrame:
    try:
        if path.suffix.lower() == ".csv":
            return pd.read_csv(path)
        return pd.read_parquet(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # pyarrow errors are ValueErrors
        kind = "CSV" if path.suffix.lower() == ".csv" else "parquet"
        why = " ".join(str(exc).split())[:120]
        raise DataError(f"data file {path}: not a readable {kind} file ({why})") from None


def _numeric(path: Path, frame: pd.DataFrame) -> np.ndarray:
    """The frame's columns as a finite float64 matrix, or a DataError naming the bad column."""
    bad = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if bad:
        raise DataError(f"data file {path}: column {bad[0]!r} is not numeric")
    return _finite(path, frame.to_numpy(dtype=np.float64), "table")


def _finite(path: Path, X: np.ndarray, what: str) -> np.ndarray:
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise DataError(
            f"data file {path}: {what} has shape {X.shape}; expected (points, features)"
        )
    if not np.isfinite(X).all():
        rows = np.unique(np.nonzero(~np.isfinite(X))[0])
        raise DataError(
            f"data file {path}: {what} has NaN or infinite values (row {int(rows[0])}"
            f"{f' and {len(rows) - 1} more' if len(rows) > 1 else ''})"
        )
    return X


def _arrays(path: Path) -> dict[str, np.ndarray]:
    suffix = path.suffix.lower()
    if suffix in TABLES:
        return {"X": _numeric(path, _read_table(path))}
    try:
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        why = " ".join(str(exc).split())[:120]
        raise DataError(f"data file {path}: not a NumPy {suffix} file ({why})") from None
    if isinstance(loaded, np.ndarray):
        if suffix != ".npy":
            raise DataError(f"data file {path}: a .npy array in a {suffix} file")
        return {"X": loaded}
    with loaded:
        return {key: np.asarray(loaded[key]) for key in loaded.files}


def default_sigma(name: str) -> float:
    """The input scale σ = 1/√d of a user table (after z-scoring, ‖σx − σy‖² ≈ 2 on average, so
    the Gaussian kernel is neither all ones nor all zeros); pass ``--sigma`` to choose another."""
    return float(1.0 / np.sqrt(load_table(name).d))


@functools.lru_cache(maxsize=8)
def load_points(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(queries, keys) of a point file: Q and K from an ``.npz`` holding both, else X twice.

    ``.npy`` holds X; ``.npz`` holds X, or Q and K (same width); a table's numeric columns are X.
    """
    path, target, _ = _verified(name)
    if target:
        raise DataError(f"data file {path}: '#{target}' (a label column) applies to classify only")
    arrays = _arrays(path)
    if "Q" in arrays and "K" in arrays:
        Q = _finite(path, arrays["Q"].astype(np.float64), "Q")
        K = _finite(path, arrays["K"].astype(np.float64), "K")
        if Q.shape[1] != K.shape[1]:
            raise DataError(f"data file {path}: Q has {Q.shape[1]} features but K has {K.shape[1]}")
        return _readonly(Q), _readonly(K)
    if "X" not in arrays:
        held = ", ".join(sorted(arrays)) or "no arrays"
        raise DataError(f"data file {path}: holds {held}; expected X, or Q and K")
    X = arrays["X"]
    if not np.issubdtype(X.dtype, np.number):
        raise DataError(f"data file {path}: X has dtype {X.dtype}; expected numbers")
    X = _readonly(_finite(path, X.astype(np.float64), "X"))
    return X, X


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
    meta = {"path": str(path), "sha256": sha256(path), "target": target, "user_file": True}
    return Dataset(
        name=str(name), X=X, y=y.astype(np.int64), feature_names=tuple(map(str, features.columns)),
        classes=tuple(classes.tolist()), metadata=meta,
    )  # fmt: skip
