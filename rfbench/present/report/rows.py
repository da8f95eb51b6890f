"""The results the report reads: a results folder's rows (:func:`load_folder`) and the rows a
reference selector picks (:func:`pick`), or why none: "not run" (a grid value absent) or "no match"
(a name or column no row has: the selector needs fixing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.results import REQUIRED_COLUMNS as REQUIRED
from rfbench.compute.results import ResultSchemaError, load_provenance, load_results, result_paths
from rfbench.present.report.frames import aggregate, anytime_stderr, derive, plain
from rfbench.present.report.markdown import escape_frame, escape_markup
from rfbench.present.report.verdicts import NO_MATCH, NOT_RUN

#: Selector keys that are instructions, not row filters.
SPECIAL_KEYS = frozenset({"derive", "baseline", "aggregate", "std_metric", "upper_bound"})
#: String keys naming a point of an experiment's grid: a missing value means "not run".
GRID_KEYS = frozenset({"figure", "dataset", "regime"})


@dataclass(frozen=True, eq=False)
class ResultSet:
    """All rows of a results folder, the files they came from and their provenance."""

    rows: pd.DataFrame
    files: tuple[Path, ...] = ()
    provenance: tuple[dict[str, Any], ...] = ()
    problems: tuple[str, ...] = ()
    _by_experiment: dict[str, pd.DataFrame] = field(default_factory=dict, compare=False)

    def experiment(self, name: str, figure: str | None = None) -> pd.DataFrame:
        """The rows of one experiment (of one ``figure`` if given; empty if not run).

        Columns that are null throughout are dropped (other experiments' parameters).
        """
        key = name if figure is None else f"{name}\0{figure}"
        if key not in self._by_experiment:
            rows = self.rows if figure is None else self.experiment(name)
            column, wanted = ("experiment", name) if figure is None else ("figure", figure)
            picked = rows[rows[column] == wanted] if len(rows) else rows
            empty = [c for c in picked.columns if c not in REQUIRED and picked[c].isna().all()]
            picked = picked.drop(columns=empty).reset_index(drop=True)
            self._by_experiment[key] = picked if len(picked) else rows.iloc[:0]
        return self._by_experiment[key]


def load_folder(folder: str | Path) -> ResultSet:
    """Every result file ``<folder>/<experiment>/<name>.parquet``; unreadable ones are listed
    (as plain text: the report escapes them where it prints them)."""
    folder = Path(folder)
    files = result_paths(folder)
    frames, good, provenance, problems = [], [], [], []
    for path in files:
        try:
            frames.append(load_results(path))
            provenance.append(load_provenance(path))
            good.append(path)
        except (OSError, ValueError, ResultSchemaError) as exc:
            problems.append(f"{path.relative_to(folder)}: {exc}")
    frames = [f for f in frames if len(f)]
    empty = pd.DataFrame({c: pd.Series([], dtype=object) for c in REQUIRED})
    rows = pd.concat(frames, ignore_index=True, sort=False) if frames else empty
    # Plain object strings: row takes on Arrow-backed strings dominate the report's run time.
    text = [c for c in rows.columns if not pd.api.types.is_numeric_dtype(rows[c])]
    rows = rows.astype({c: object for c in text})
    # strings from result files reach REPORT.md: as text, never as markup
    rows = escape_frame(rows)
    provenance = [escape_markup(p) for p in provenance]
    return ResultSet(rows, tuple(good), tuple(provenance), tuple(problems))


def _as_list(wanted: Any) -> list[Any]:
    return list(wanted) if isinstance(wanted, list | tuple) else [wanted]


def _number(v: Any) -> float | None:
    """``v`` as a float if it is a number or a numeric string (an ``order`` of m values)."""
    if isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def column_mask(df: pd.DataFrame, key: str, wanted: Any) -> np.ndarray:
    """Rows whose ``key`` equals ``wanted`` (or any of a list); floats compare to 1e-9."""
    if key not in df.columns:
        return np.zeros(len(df), dtype=bool)
    col = df[key]
    values = _as_list(wanted)
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        arr = col.to_numpy(dtype=float, na_value=np.nan)
        numbers = [n for n in map(_number, values) if n is not None]
        return np.isclose(arr[:, None], numbers, rtol=1e-9, atol=1e-12).any(axis=1)
    return col.isin([str(v) for v in values]).to_numpy(dtype=bool)


def filters(selector: Mapping[str, Any]) -> dict[str, Any]:
    """The row filters of a selector (without derive/baseline/aggregate/std_metric)."""
    return {k: v for k, v in selector.items() if k not in SPECIAL_KEYS}


def select(df: pd.DataFrame, selector: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of ``df`` matching every filter of ``selector``."""
    mask = np.ones(len(df), dtype=bool)
    for key, wanted in filters(selector).items():
        mask &= column_mask(df, key, wanted)
    return df[mask]


def fmt_selector(selector: Mapping[str, Any]) -> str:
    """``key=value`` pairs, sorted, as the report prints a selector."""
    return ", ".join(f"{k}={v!r}" for k, v in sorted(selector.items()))


def explain_empty(df: pd.DataFrame, selector: Mapping[str, Any]) -> tuple[str, str]:
    """(verdict, why) for a selector that matched no row of ``df``."""
    problems: list[tuple[str, str]] = []
    for key, wanted in sorted(filters(selector).items()):
        if key not in df.columns:
            problems.append((NO_MATCH, f"no column {key!r} in the results"))
            continue
        if column_mask(df, key, wanted).any():
            continue
        have = sorted({str(plain(v)) for v in df[key] if plain(v) is not None})
        shown = ", ".join(have[:8]) + (", ..." if len(have) > 8 else "")
        numeric = all(isinstance(v, int | float) for v in _as_list(wanted))
        kind = NOT_RUN if key in GRID_KEYS or numeric else NO_MATCH
        problems.append((kind, f"{key}={wanted!r} not in the results (have: {shown or 'none'})"))
    if not problems:
        return NO_MATCH, f"no row has all of {fmt_selector(filters(selector))}"
    kind = NO_MATCH if any(k == NO_MATCH for k, _ in problems) else NOT_RUN
    return kind, "; ".join(text for _, text in problems)


@dataclass(frozen=True)
class Picked:
    """Rows picked by a selector (after derive and aggregate), or why there are none."""

    rows: pd.DataFrame
    verdict: str = ""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return not self.verdict


#: the feature count M of an estimator's row, written by the runner (compute/runner/core.py):
#: claims compare estimators at equal features whatever an estimator's m counts
FEATURES = "features"


def pick(
    df: pd.DataFrame,
    selector: Mapping[str, Any],
    aggregate_spec: str | None = None,
    keep: list[str] | None = None,
) -> Picked:
    """Apply a selector to ``df``: filter, ``derive`` against ``baseline``, then ``aggregate``.

    ``aggregate_spec`` is the default when the selector has no ``aggregate`` of its own;
    ``keep`` as in :func:`rfbench.present.report.frames.aggregate`.
    """
    how = selector.get("derive", "value")
    rows = anytime_stderr(select(df, selector))
    if rows.empty:
        return Picked(rows, *explain_empty(df, selector))
    if how != "value":
        base_sel = {**selector, "estimator": selector["baseline"]}
        base = anytime_stderr(select(df, base_sel))
        if base.empty:
            return Picked(base, *explain_empty(df, base_sel))
        rows = derive(rows, base, how)
        if rows.empty:
            detail = f"no {selector['baseline']} rows pair with {fmt_selector(filters(selector))}"
            return Picked(rows, NO_MATCH, detail)
    if keep and FEATURES in keep and FEATURES not in rows.columns:
        detail = "its result file has no feature counts (written by an older rfbench): run it again"
        return Picked(rows.iloc[:0], NO_MATCH, detail)
    return Picked(aggregate(rows, selector.get("aggregate", aggregate_spec), keep))
