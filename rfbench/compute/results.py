"""The result contract (docs/architecture.md#result-schema): tidy rows, their validation, atomic
parquet with provenance.

A result file holds one row per (experiment, estimator, parameter point, metric) with the columns of
``REQUIRED_COLUMNS`` plus parameter columns (``PARAMETER_COLUMNS`` and any extra scalar column;
both declared in :mod:`rfbench.compute.schema`),
and carries a JSON provenance object under the parquet key-value metadata key ``rfbench``.
Plots and the report read these files only, through :func:`load_results`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import os
import platform
import secrets
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import rfbench
from rfbench.compute.checks import UserError
from rfbench.compute.schema import (  # declared there; read through this module too
    BOOL,
    DERIVED_COLUMNS,
    FLOAT,
    INT,
    METRICS,
    NULLABLE_REQUIRED,
    PARAMETER_COLUMNS,
    REQUIRED_COLUMNS,
    STRING,
)

METADATA_KEY = b"rfbench"


class ResultSchemaError(ValueError):
    """A result table that does not follow the contract of docs/architecture.md#result-schema."""


def register_metric(name: str, description: str) -> str:
    """Add a metric name; re-registering a name for a different quantity is an error."""
    known = METRICS.get(name)
    if known is not None and known != description:
        raise ValueError(f"metric {name!r} already means {known!r}; choose a new name")
    METRICS[name] = description
    return name


def register_parameter(name: str, kind: str, derived: bool = False) -> str:
    """Fix the kind (``"string"``, ``"float"``, ``"int"``, ``"bool"``) of a parameter column;
    ``derived``: it is computed from the row's measurement (see :data:`DERIVED_COLUMNS`)."""
    if kind not in (STRING, FLOAT, INT, BOOL):
        raise ValueError(f"unknown column kind {kind!r}; allowed: {STRING}, {FLOAT}, {INT}, {BOOL}")
    if name in REQUIRED_COLUMNS or PARAMETER_COLUMNS.get(name, kind) != kind:
        raise ValueError(f"column {name!r} already has kind {_kind_of(name)!r}")
    PARAMETER_COLUMNS[name] = kind
    if derived:
        DERIVED_COLUMNS.add(name)
    return name


def _kind_of(name: str) -> str | None:
    return REQUIRED_COLUMNS.get(name) or PARAMETER_COLUMNS.get(name)


_ACCEPTS: dict[str, frozenset[str]] = {
    STRING: frozenset({"string", "empty"}),
    FLOAT: frozenset({"floating", "integer", "mixed-integer-float", "empty"}),
    INT: frozenset({"integer", "floating", "mixed-integer-float", "empty"}),
    BOOL: frozenset({"boolean", "empty"}),
}
_INFERRED_KIND = {
    "string": STRING,
    "integer": INT,
    "floating": FLOAT,
    "mixed-integer-float": FLOAT,
    "boolean": BOOL,
}
#: the canonical dtype of each kind but STRING (the running pandas' default string dtype, str in
#: pandas 3, else object: asked only when a string column is typed, as it may start pyarrow)
_DTYPES = {FLOAT: "float64", INT: "Int64", BOOL: "boolean"}


def _coerce_column(name: str, col: pd.Series, kind: str | None = None) -> pd.Series:
    """``col`` with the canonical dtype of its kind (given, else known, else inferred from its
    values)."""
    inferred = pd.api.types.infer_dtype(col, skipna=True)
    kind = kind or _kind_of(name)
    if kind is None:  # an extra parameter column: its kind follows from its values
        if inferred == "empty":
            return col.astype(object).where(col.notna(), None)
        kind = _INFERRED_KIND.get(inferred)
        if kind is None:
            raise ResultSchemaError(
                f"column {name!r} holds {inferred} values; use strings or numbers"
            )
    if inferred not in _ACCEPTS[kind]:
        raise ResultSchemaError(f"column {name!r} must hold {kind} values, got {inferred} values")
    if kind == INT:
        col = col.astype("Float64")
        if (col.dropna() % 1 != 0).any():
            raise ResultSchemaError(
                f"column {name!r} must hold integers, got {col.dropna().iloc[0]}"
            )
    return col.astype(_DTYPES[kind] if kind in _DTYPES else pd.Series(["a"]).dtype)


def validate_results(
    df: pd.DataFrame, check_metrics: bool = True, kinds: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Check ``df`` against the schema; return it with canonical dtypes and column order.

    Raises :class:`ResultSchemaError` naming the missing column, the bad type or the unknown metric.
    ``check_metrics=False`` skips the metric-name check (done when the file was written; a reader
    need not import the experiment module that registered the name). ``kinds``: column -> kind as
    a result file declares them (:func:`column_kinds`), ahead of the registered ones.
    """
    if not isinstance(df, pd.DataFrame):
        raise ResultSchemaError(f"results must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ResultSchemaError(f"result table lacks required column(s): {', '.join(missing)}")
    if df.columns.duplicated().any():
        raise ResultSchemaError(f"duplicate columns: {list(df.columns[df.columns.duplicated()])}")
    out = {}
    for name in df.columns:
        if not isinstance(name, str) or not name:
            raise ResultSchemaError(f"column names must be non-empty strings, got {name!r}")
        kind = (kinds or {}).get(name)
        out[name] = _coerce_column(name, df[name].reset_index(drop=True), kind)
    res = pd.DataFrame(out, index=pd.RangeIndex(len(df)))
    for name in REQUIRED_COLUMNS:
        if name not in NULLABLE_REQUIRED and res[name].isna().any():
            row = int(np.flatnonzero(res[name].isna().to_numpy())[0])
            raise ResultSchemaError(f"column {name!r} has null values (row {row})")
    unknown = sorted(set(res["metric"]) - set(METRICS)) if check_metrics else []
    if unknown:
        raise ResultSchemaError(
            f"unknown metric(s) {', '.join(map(repr, unknown))}; known: {', '.join(METRICS)} "
            "(add one with rfbench.compute.results.register_metric)"
        )
    if (res["n_trials"] < 0).any():
        raise ResultSchemaError("column 'n_trials' must be non-negative")
    res["n_trials"] = res["n_trials"].astype("int64")
    known = [c for c in PARAMETER_COLUMNS if c in res.columns]
    extra = sorted(c for c in res.columns if c not in REQUIRED_COLUMNS and c not in known)
    return res[[*REQUIRED_COLUMNS, *known, *extra]]


# ---------------------------------------------------------------------------------- provenance


@functools.cache
def git_info() -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout holding the rfbench package; (None, None) if unknown."""
    cwd = Path(rfbench.__file__).resolve().parent

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(
                ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None, None
    status = git("status", "--porcelain", "--untracked-files=no")
    return commit, (None if status is None else bool(status))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, tuple | set | frozenset):
        return list(obj)
    if isinstance(obj, Mapping):
        return dict(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def make_provenance(
    *,
    config: Mapping[str, Any],
    seed: int,
    command_line: str | Sequence[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The provenance object of a result file (docs/architecture.md#result-schema), with the
    environment filled in."""
    import scipy

    if command_line is None:
        command_line = sys.argv
    if not isinstance(command_line, str):
        import shlex

        command_line = shlex.join(str(a) for a in command_line)
    commit, dirty = git_info()
    prov = {
        "rfbench_version": rfbench.__version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "config": json.loads(json.dumps(dict(config), default=_json_default)),
        "seed": int(seed),
        "command_line": command_line,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "pandas": pd.__version__,
        "platform": platform.platform(),
        "machine": machine_info(),
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    prov.update(extra)
    return prov


def machine_info() -> dict[str, Any]:
    """The machine a result was computed on: cores and BLAS (timings only mean something with it).

    Returns
    -------
    dict
        ``cores`` (``os.cpu_count``), ``usable_cores`` (the CPU affinity, where the OS has one),
        ``processor`` (``platform.machine``/``processor``), ``blas``: one entry per BLAS/OpenMP
        library loaded, from threadpoolctl (``internal_api``, ``version``, ``num_threads``,
        ``threading_layer``, ``architecture``) if installed, else numpy's build configuration
        (``name``, ``version``).
    """
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "processor": platform.processor() or platform.machine(),
    }
    blas: list[dict[str, Any]] = []
    try:
        from threadpoolctl import threadpool_info

        keys = ("user_api", "internal_api", "version", "num_threads", "threading_layer",
                "architecture")  # fmt: skip
        blas = [{k: lib.get(k) for k in keys if k in lib} for lib in threadpool_info()]
    except Exception:  # threadpoolctl comes with scikit-learn; any failure: numpy's config
        blas = []
    if not blas:
        try:
            deps = np.show_config(mode="dicts")["Build Dependencies"]
            blas = [
                {k: deps[lib].get(k) for k in ("name", "version")} for lib in ("blas", "lapack")
            ]
        except Exception:
            blas = []
    info["blas"] = blas
    return info


# ---------------------------------------------------------------------------------- files


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it onto ``path``.

    A crash or Ctrl-C at any moment leaves either the old file or the new one, never a partial one.
    A ``path`` that is a folder, or under a file, is a :class:`UserError` (one line).
    """
    path = Path(path)
    if path.is_dir():
        raise UserError(f"cannot write {path}: it is a folder; give a file name")
    if any(parent.is_file() for parent in path.parents):
        raise UserError(f"cannot write {path}: a folder on its path is a file")
    path.parent.mkdir(parents=True, exist_ok=True)
    # Not mkstemp: its 0600 mode would stick to the result; a random suffix avoids collisions.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    try:
        write(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return path


def write_table(
    df: pd.DataFrame, path: str | os.PathLike[str], metadata: Mapping[bytes, bytes]
) -> Path:
    """Write ``df`` as parquet atomically with extra key-value schema metadata (no validation)."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    return atomic_write(path, lambda tmp: pq.write_table(table, tmp))


def write_results(
    df: pd.DataFrame, path: str | os.PathLike[str], provenance: Mapping[str, Any]
) -> Path:
    """Validate ``df`` and write it atomically to ``path`` with ``provenance`` as metadata."""
    for key in ("config", "seed"):
        if key not in provenance:
            raise ValueError(f"provenance lacks {key!r} (build it with make_provenance)")
    df = validate_results(df)
    blob = json.dumps(
        {**provenance, **describe_columns(df)}, default=_json_default, sort_keys=True
    ).encode()
    return write_table(df, path, {METADATA_KEY: blob})


_DTYPE_KIND = {"b": BOOL, "i": INT, "u": INT, "f": FLOAT}


def describe_columns(df: pd.DataFrame) -> dict[str, Any]:
    """What a result file says of its own columns: ``columns`` (name -> kind, from the validated
    dtypes) and ``derived`` (the columns computed from a row's measurement), so a reader needs no
    code of the experiment that wrote it (docs/architecture.md#result-schema)."""
    kinds = {
        name: _kind_of(name) or _DTYPE_KIND.get(getattr(df[name].dtype, "kind", ""), STRING)
        for name in df.columns
    }
    return {"columns": kinds, "derived": sorted(DERIVED_COLUMNS & set(df.columns))}


def column_kinds(provenance: Mapping[str, Any]) -> dict[str, str]:
    """The column kinds a result file declares (empty for files written before they did)."""
    kinds = provenance.get("columns")
    if not isinstance(kinds, Mapping):
        return {}
    return {str(k): v for k, v in kinds.items() if v in (STRING, FLOAT, INT, BOOL)}


def derived_columns(provenance: Mapping[str, Any]) -> frozenset[str]:
    """The derived columns a result file declares; for older files, those registered here."""
    derived = provenance.get("derived")
    if not isinstance(derived, list):
        return frozenset(DERIVED_COLUMNS)
    return frozenset(map(str, derived))


class UnreadableResultError(UserError, ResultSchemaError):
    """A result file that cannot be read as one: corrupt, truncated, or not rfbench's."""


@contextlib.contextmanager
def _reading(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn any failure to read ``path`` into one :class:`UnreadableResultError` line; refuse,
    before opening it, a path that is not a regular file (a FIFO's read would wait forever)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise UnreadableResultError(
                f"result file {path} is not a regular file (a folder, a FIFO or a device); move "
                "it away"
            )
        yield
    except UnreadableResultError:
        raise
    except (OSError, ValueError, pa.ArrowException, KeyError, TypeError, RecursionError) as exc:
        # RecursionError: JSON metadata nested too deep to decode
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        reason = reason.removeprefix(f"{path}: ")
        raise UnreadableResultError(f"result file {path} is unreadable: {reason}") from exc


#: bytes per cell (row × column) of a result file once read: its frame, compare's pairing of rows,
#: the tables kept for an output (peak measured by tracemalloc: 28 B per cell comparing the
#: committed results with themselves, 59 B on a 200,000-row file, 90 B with 200-character strings)
CELL_BYTES = 200


def check_result_size(path: str | os.PathLike[str]) -> tuple[int, int]:
    """The row and column counts of a result file, from its footer; raise
    :class:`UnreadableResultError` (a user error) if :data:`CELL_BYTES` per cell would not fit the
    memory budget (:func:`rfbench.compute.memlimits.budget`), before any row is read."""
    from rfbench.compute.memlimits import budget, human

    with _reading(path):
        meta = pq.read_metadata(path)
        rows, columns = int(meta.num_rows), int(meta.num_columns)
    limit = budget()
    need = CELL_BYTES * rows * columns
    if need > limit.bytes:
        raise UnreadableResultError(
            f"result file {path} has {rows:,} rows of {columns} columns: reading it needs about "
            f"{human(need)}, more than the {human(limit.bytes)} budget ({limit.source})"
        )
    return rows, columns


def load_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The rows of a result file, validated, with canonical dtypes.

    Raises :class:`UnreadableResultError` (a user error) if the file cannot be read as one or
    would not fit the memory budget (:func:`check_result_size`).
    """
    check_result_size(path)
    with _reading(path):
        table = pq.read_table(path)
        try:
            frame = table.to_pandas()
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError,
                pa.ArrowException) as exc:  # fmt: skip
            plain = table.replace_schema_metadata({
                k: v for k, v in (table.schema.metadata or {}).items() if k != b"pandas"
            })  # fmt: skip
            plain.to_pandas()  # fails too: the columns are the problem, told by _reading
            raise ResultSchemaError(f"its pandas metadata is broken ({exc})") from exc
        blob = (table.schema.metadata or {}).get(METADATA_KEY)
        try:
            declared = json.loads(blob) if blob else {}
        except ValueError:
            declared = {}
        kinds = column_kinds(declared) if isinstance(declared, dict) else {}
        return validate_results(frame, check_metrics=False, kinds=kinds)


def load_provenance(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The provenance object of a result file (:class:`UnreadableResultError` if unreadable)."""
    with _reading(path):
        meta = pq.read_schema(path).metadata or {}
        if METADATA_KEY not in meta:
            raise ResultSchemaError(f"{path}: not an rfbench result file (no 'rfbench' metadata)")
        provenance = json.loads(meta[METADATA_KEY])
        if not isinstance(provenance, dict):
            kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
                type(provenance), "a number"
            )
            raise ResultSchemaError(f"its 'rfbench' metadata is {kind}, not a JSON object")
        return provenance


def result_path(folder: str | os.PathLike[str], experiment: str, name: str) -> Path:
    """Where a result lives in a results folder: ``<folder>/<experiment>/<name>.parquet`` (the one
    statement of the layout; :func:`result_paths` and :func:`find_result` read it back)."""
    return Path(folder) / experiment / f"{name}.parquet"


def find_result(folder: str | os.PathLike[str], name: str) -> Path | None:
    """The result file named ``name`` (a config name) in any experiment folder, or None."""
    hits = [p for p in result_paths(folder) if p.stem == name]
    return hits[0] if hits else None


def result_paths(folder: str | os.PathLike[str]) -> list[Path]:
    """Every result file of a results folder: ``<folder>/<experiment>/<name>.parquet``.

    Hidden files and folders (temporary files, the job cache) are left out.
    """
    return sorted(
        p
        for p in Path(folder).glob("*/*.parquet")
        if not p.name.startswith(".") and not p.parent.name.startswith(".")
    )


def check_readable(folder: str | os.PathLike[str]) -> list[Path]:
    """The result files of ``folder``, each read once; :class:`UnreadableResultError` on the first
    that cannot be read (so ``figures``, ``site`` and ``report --strict`` stop naming it)."""
    paths = result_paths(folder)
    for path in paths:
        load_provenance(path)
        load_results(path)
    return paths
