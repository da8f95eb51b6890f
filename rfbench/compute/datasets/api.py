"""The public functions: ``load``, ``available``, ``local_status``, ``fetch``; the loader of each
kind of data set (the built-in ones, inside scikit-learn, and the UCI tables are loaded here; the
images in :mod:`rfbench.compute.datasets.images`).

UCI tables (the eight SimRF/DERF classification sets, letter, Boston) are parsed and encoded as the
SimRF authors' ``load_data_onehot`` (docs/experiments.md#simrf-fig8; ``compat=True``: its
``data[:-1]`` last-line drop). Parsing is robust to CRLF, blank lines and whitespace separators.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rfbench.compute.datasets import cache, errors, images, user
from rfbench.compute.datasets.preprocess import Dataset
from rfbench.compute.datasets.registry import DATASETS, DatasetInfo, Table, get


def read_rows(name: str, path: Path, table: Table, compat: bool = False) -> tuple[list, int]:
    """Fields of each non-blank line, and how many real rows ``compat`` dropped (0 or 1)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise errors.unreadable(name, path, "a UTF-8 text table", exc) from exc
    dropped = 0
    if compat and lines:
        dropped = int(bool(lines[-1].strip()))
        lines = lines[:-1]
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(table.sep)] if table.sep else line.split()
        if len(fields) != len(table.columns):
            expected = f"{len(table.columns)} fields per line ({', '.join(table.columns)})"
            why = f"line {number} has {len(fields)} fields"
            raise errors.unreadable(name, path, expected, why)
        rows.append(fields)
    if not rows:
        raise errors.unreadable(name, path, "a non-empty table", "no data lines")
    return rows, dropped


def encode(
    name: str, path: Path, table: Table, rows: list[list[str]]
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], tuple[str, ...]]:
    """(X, y, feature names, classes): numeric columns, then one-hot categorical columns."""
    fields = zip(*rows, strict=True)  # read_rows checked every row has len(table.columns) fields
    columns = {c: np.asarray(col) for c, col in zip(table.columns, fields, strict=True)}
    label = table.label or table.columns[-1]
    numeric = [c for c in table.columns if c not in (*table.categorical, *table.drop, label)]
    try:
        blocks = [columns[c].astype(np.float64)[:, None] for c in numeric]
        names = list(numeric)
        for c in table.categorical:
            cats, codes = np.unique(columns[c], return_inverse=True)
            blocks.append(np.eye(len(cats))[codes])
            names += [f"{c}={v}" for v in cats]
        if table.regression:
            y, classes = columns[label].astype(np.float64), ()
        else:
            cats, y = np.unique(columns[label], return_inverse=True)
            classes = tuple(str(v) for v in cats)
    except ValueError as exc:
        raise errors.unreadable(name, path, "numbers in the numeric columns", exc) from exc
    X = np.hstack(blocks) if blocks else np.empty((len(rows), 0))
    return X, np.asarray(y), tuple(names), classes


def load_uci(info: DatasetInfo, *, compat: bool = False, download: bool = True) -> Dataset:
    """A UCI table, encoded; ``compat=True`` reproduces the authors' last-line drop."""
    assert info.table is not None
    spec = info.variants[""][0]
    path = cache.ensure(info.name, spec, download_missing=download)
    rows, dropped = read_rows(info.name, path, info.table, compat)
    X, y, names, classes = encode(info.name, path, info.table, rows)
    label = info.table.label or info.table.columns[-1]
    meta = {
        "dataset": info.name,
        "file": spec.path,
        "sha256": spec.sha256,
        "compat": compat,
        "compat_rows_dropped": dropped,
        "encoding": "numeric columns (file order), then one-hot categorical (sorted categories)",
        "categorical": list(info.table.categorical),
        "dropped_columns": list(info.table.drop),
        "label": label,
        "label_encoding": "regression target" if info.table.regression else "np.unique order",
    }
    return Dataset(info.name, X, y, names, classes, meta, variant="compat" if compat else "")


def load_builtin(info: DatasetInfo, *, download: bool = True) -> Dataset:
    """``sklearn.datasets.load_wine`` (178 x 13, 3 classes) or ``load_digits`` (1797 x 64,
    pixel counts 0..16, 10 classes), unchanged (no download, no file). ``download`` is accepted
    and ignored."""
    import sklearn
    from sklearn import datasets as skd

    bunch = {"wine": skd.load_wine, "digits": skd.load_digits}[info.name]()
    names = tuple(str(f) for f in bunch.feature_names)
    classes = tuple(str(c) for c in bunch.target_names)
    meta = {
        "dataset": info.name,
        "file": f"scikit-learn {sklearn.__version__} load_{info.name}()",
        "label_encoding": "scikit-learn target",
    }
    X = np.asarray(bunch.data, dtype=np.float64)
    return Dataset(info.name, X, np.asarray(bunch.target, dtype=np.int64), names, classes, meta)


LOADERS: dict[str, Callable[..., Dataset]] = {
    "table": load_uci,
    "builtin": load_builtin,
    "mnist": images.load_mnist,
    "cifar10": images.load_cifar10,
}


def options(name: str) -> dict[str, Any]:
    """The keyword options of a data set's loader with their defaults (a user file has none)."""
    if user.is_reference(name):
        return {}
    sig = inspect.signature(LOADERS[get(name).kind])
    return {k: p.default for k, p in sig.parameters.items() if p.kind is p.KEYWORD_ONLY}


def load(name: str, **opts: Any) -> Dataset:
    """Load a data set by name (case-insensitive; aliases ``krkopt``, ``housing``).

    A user's table is named ``PATH#TARGET[@SHA]`` (see :mod:`rfbench.compute.datasets.user`).
    Files are verified against their pinned sha256 on every load; a missing file is downloaded
    into the data folder unless ``download=False``. Options per kind: UCI tables ``compat``
    (the authors' last-line drop); ``mnist`` ``split``, ``size``; ``cifar10`` ``variant``,
    ``split``, ``size``, ``grayscale``. Every failure is a one-line :class:`DataError`.
    """
    if user.is_reference(name):
        if opts:
            raise errors.DataError(f"data file {name!r} takes no options (got {', '.join(opts)})")
        return user.load_table(name)
    info = get(name)
    allowed = options(info.name)
    bad = sorted(set(opts) - set(allowed))
    if bad:
        raise errors.DataError(
            f"data set {info.name!r} has no option {', '.join(bad)}; "
            f"allowed: {', '.join(allowed) or 'none'}"
        )
    return LOADERS[info.kind](info, **opts)


def check(name: str) -> str:
    """``name`` if it names a usable data set — a registry name, or a readable labelled user
    table ``PATH#TARGET`` (:mod:`rfbench.compute.datasets.user`) — else a one-line DataError."""
    if user.is_reference(name):
        user.load_table(name)
    else:
        get(name)
    return name


def _variant_present(info: DatasetInfo, variant: str, verify: bool) -> bool:
    files = info.variants[variant]
    present = all(map(cache.present, files))
    return present and (not verify or all(cache.good(info.name, spec) for spec in files))


def available(name: str, verify: bool = False) -> bool:
    """Whether ``name`` loads without the network: built in, or some variant's files present
    (and, with ``verify``, matching their checksums)."""
    info = get(name)
    if info.kind == "builtin":
        return True
    return any(_variant_present(info, v, verify) for v in info.variants)


def local_status(name: str) -> str:
    """For listings: built-in | yes | yes (test split only) | sample only | no (cheap check)."""
    info = get(name)
    if info.kind == "builtin":
        return "built-in"
    have = [v for v in info.variants if _variant_present(info, v, verify=False)]
    if not have:
        return "no"
    if info.kind == "mnist" and have == ["test"]:
        return "yes (test split only)"
    if info.kind == "cifar10" and "full" not in have:
        return "sample only (220 PNG)"
    return "yes"


@dataclass(frozen=True)
class FetchResult:
    dataset: str
    path: Path
    status: str  # ok | downloaded | skipped (...)


def fetch(name: str, *, base_url: str | None = None) -> list[FetchResult]:
    """Download and verify every file of ``name`` (or of every data set for ``"all"``). A file
    already present is verified; a corrupt one is downloaded again. Files with no public URL
    (the CIFAR-10 PNG sample) are skipped unless present or a mirror is configured."""
    infos = list(DATASETS.values()) if name == "all" else [get(name)]
    results = []
    for info in infos:
        for spec in info.files:
            path = cache.locate(spec)
            if not cache.urls(spec, base_url) and not cache.present(spec):
                results.append(FetchResult(info.name, path, "skipped (offline copy only)"))
                continue
            results.append(
                FetchResult(info.name, path, cache.fetch(info.name, spec, base_url=base_url))
            )
    return results
