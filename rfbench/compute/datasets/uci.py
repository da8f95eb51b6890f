"""UCI tables (the eight SimRF/DERF classification sets, letter, Boston): parse and encode as the
SimRF authors' ``load_data_onehot`` (docs/experiments.md#simrf-fig8; ``compat=True``: its
``data[:-1]`` last-line drop). Parsing is robust to CRLF, blank lines and whitespace separators.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rfbench.compute.datasets import cache, errors
from rfbench.compute.datasets.dataset import Dataset
from rfbench.compute.datasets.registry import DatasetInfo, Table


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


def load_table(info: DatasetInfo, *, compat: bool = False, download: bool = True) -> Dataset:
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
