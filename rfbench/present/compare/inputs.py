"""What ``rfbench compare`` learns about a result file before reading its rows: its size, config and
timing, each problem one :class:`~rfbench.compute.checks.UserError` naming the file (exit 2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rfbench.compute.checks import UserError
from rfbench.compute.results import (
    CELL_BYTES,
    UnreadableResultError,
    derived_columns,
    load_provenance,
)

#: config keys that name a run without shaping its numbers
LABEL_KEYS = frozenset({"name"})
#: characters of a config value shown before it is cut
VALUE_CHARS = 40
#: the timing provenance keys compare reads (``rfbench run`` and the benchmarks write them)
TIMING_KEYS = ("jobs_wall_s", "jobs_cpu_s")


@dataclass(frozen=True)
class ResultFile:
    """A result file as its parquet footer (``rows``, ``columns``) and provenance (``config``,
    ``timing`` of :data:`TIMING_KEYS`, the ``derived`` columns) describe it, before its rows are
    read.
    """

    path: Path
    rows: int
    columns: int
    config: Mapping[str, Any]
    timing: Mapping[str, float | None]
    derived: frozenset[str] = frozenset()

    @property
    def cells(self) -> int:
        return self.rows * self.columns


def _kind(value: Any) -> str:
    return "an object" if isinstance(value, Mapping) else f"{type(value).__name__} {value!r:.40}"


def _timing(path: Path, provenance: Mapping[str, Any]) -> dict[str, float | None]:
    timing = provenance.get("timing")
    if timing is None:
        return dict.fromkeys(TIMING_KEYS)
    if not isinstance(timing, Mapping):
        raise UserError(f"result file {path}: its provenance 'timing' is {_kind(timing)}, "
                        "not an object of seconds")  # fmt: skip
    out: dict[str, float | None] = {}
    for key in TIMING_KEYS:
        value = timing.get(key)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if value is not None and not (ok and math.isfinite(value) and value >= 0):
            raise UserError(f"result file {path}: its provenance timing {key!r} is "
                            f"{_kind(value)}, not a number of seconds ≥ 0")  # fmt: skip
        out[key] = None if value is None else float(value)
    return out


def read_result_file(path: str | Path) -> ResultFile:
    """The :class:`ResultFile` of ``path``, without reading its rows (:class:`UserError` naming the
    file when it is unreadable or its provenance has the wrong shape).
    """
    path = Path(path)
    provenance = load_provenance(path)
    try:
        meta = pq.read_metadata(path)
        rows, columns = int(meta.num_rows), int(meta.num_columns)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise UnreadableResultError(f"result file {path} is unreadable: {exc}") from exc
    config = {} if provenance.get("config") is None else provenance["config"]
    if not isinstance(config, Mapping):
        raise UserError(f"result file {path}: its provenance 'config' is {_kind(config)}, "
                        "not an object")  # fmt: skip
    timing = _timing(path, provenance)
    return ResultFile(path, rows, columns, config, timing, derived_columns(provenance))


def config_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The config keys (but ``name``) whose values differ: key → (value in A, value in B); a key
    absent on one side has the value None there."""
    keys = sorted(set(a) | set(b), key=str)
    return {k: (a.get(k), b.get(k)) for k in keys if k not in LABEL_KEYS and a.get(k) != b.get(k)}


def check_fits(pairs: Sequence[tuple[ResultFile, ResultFile]], budget: int, source: str) -> None:
    """Refuse (:class:`UserError`) a comparison whose files would not fit ``budget`` bytes.

    The estimate is :data:`CELL_BYTES` per cell of every file compared (the shared tables of
    every file are kept for the output); the message names the largest file and its rows.
    """
    from rfbench.compute.memlimits import human

    need = CELL_BYTES * sum(fa.cells + fb.cells for fa, fb in pairs)
    if need <= budget:
        return
    largest = max((f for pair in pairs for f in pair), key=lambda f: f.cells)
    raise UserError(
        f"result file {largest.path} has {largest.rows:,} rows of {largest.columns} columns: "
        f"comparing needs about {human(need)}, more than the {human(budget)} budget ({source})"
    )


def shown_value(key: str, value: Any) -> str:
    """A config value for people: ``repr`` cut to :data:`VALUE_CHARS`; a profile by its name
    (``default`` for a run without ``--profile``, as ``figures`` and ``report`` call it)."""
    if key == "profile":
        return "default" if value is None else str(value)
    text = repr(value)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def describe_diff(diff: Mapping[str, tuple[Any, Any]], limit: int = 4) -> str:
    """``profile 'paper' vs 'quick', r [1.0, 1.5] vs [1.0], …`` for the first ``limit`` keys
    (profile first), then how many more."""
    keys = sorted(diff, key=lambda k: (k != "profile", str(k)))
    parts = [
        f"{k} {shown_value(k, diff[k][0])} vs {shown_value(k, diff[k][1])}" for k in keys[:limit]
    ]
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return ", ".join(parts) + more
