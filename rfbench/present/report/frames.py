"""Operations on tidy result rows (docs/architecture.md#result-schema) for numbers and checks:
grouping, aggregate, derive, align. Every column but :data:`NON_KEYS` identifies a row; a null is a
value of its own.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.stats import standard_error
from rfbench.present.reference.loader import AGGREGATE

#: Columns that measure rather than identify a row (``note`` is free text). ``resolved`` says
#: whether the sample resolves an empirical statistic (absent or null: resolved); ``n_needed``,
#: when given, is the sample size that would resolve it.
#: The columns of a sequentially drawn row (stop = resolved; docs/architecture.md#sequential-draws)
#: measure it too: why its draws stopped and the anytime-valid intervals of its value and of its
#: declared comparison (``versus`` minus the row's estimator).
SEQUENTIAL_COLUMNS = ("stop", "cs_low", "cs_high", "versus", "diff_low", "diff_high", "p_anytime")
NON_KEYS = frozenset(
    {"value", "stderr", "n_trials", "note", "resolved", "n_needed", "closed_form",
     *SEQUENTIAL_COLUMNS}
)  # fmt: skip


def plain(value: Any) -> Any:
    """A Python scalar, with every kind of null (None, NaN, pd.NA) as None."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def sort_key(key: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    """Sorts tuples of plain values: nulls first, then numbers, then strings."""

    def one(v: Any) -> tuple[int, Any]:
        if v is None:
            return (0, 0)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return (1, float(v))
        return (2, str(v))

    return tuple(one(v) for v in key)


def key_columns(df: pd.DataFrame) -> list[str]:
    """The columns that identify a row."""
    return [c for c in df.columns if c not in NON_KEYS]


def _varies(col: pd.Series) -> bool:
    arr = col.to_numpy()
    if len(arr) < 2:
        return False
    null = pd.isna(arr)
    if null.any():
        return not null.all()
    return bool((arr[1:] != arr[0]).any())


def varying(df: pd.DataFrame, columns: list[str] | None = None) -> list[str]:
    """The key columns (or ``columns``) that take more than one value (null counts as one)."""
    cols = key_columns(df) if columns is None else columns
    return [c for c in cols if c in df.columns and _varies(df[c])]


def _group_ids(df: pd.DataFrame, columns: list[str]) -> tuple[list[tuple[Any, ...]], np.ndarray]:
    """The distinct keys of ``columns`` (absent columns are null; values compared as
    :func:`plain`) and each row's index into them."""
    table = [[plain(v) for v in df[c]] if c in df.columns else [None] * len(df) for c in columns]
    index: dict[tuple[Hashable, ...], int] = {}
    ids = np.array([index.setdefault(k, len(index)) for k in zip(*table, strict=True)], dtype=int)
    return list(index), ids


def groups(df: pd.DataFrame, columns: list[str]) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The rows split by the values of ``columns`` (absent columns are null), in sorted order."""
    if not columns:
        return [({}, df)]
    keys, ids = _group_ids(df, columns)
    order = sorted(range(len(keys)), key=lambda i: sort_key(keys[i]))
    rows = np.argsort(ids, kind="stable")
    starts = np.searchsorted(ids[rows], np.arange(len(keys) + 1))
    return [
        (dict(zip(columns, keys[i], strict=True)), df.iloc[rows[starts[i] : starts[i + 1]]])
        for i in order
    ]


def varies_within(df: pd.DataFrame, by: list[str], columns: list[str]) -> list[str]:
    """The ``columns`` that take more than one value (null counts as one) among the rows sharing a
    value of ``by``.
    """
    _, ids = _group_ids(df, by)
    n = len(set(ids))
    return [c for c in columns if len(set(zip(ids, map(plain, df[c]), strict=True))) > n]


def split_at(df: pd.DataFrame, along: str) -> list[str]:
    """Key columns that tell apart rows sharing a value of ``along`` (one curve per value)."""
    cols = [c for c in varying(df) if c != along]
    if along not in df.columns:
        return cols
    return varies_within(df, [along], cols)


def quadrature(*errors: Any) -> float:
    """√(Σ se²) over the known standard errors; NaN if none is known."""
    known = [float(e) for e in errors if plain(e) is not None]
    return math.sqrt(sum(e * e for e in known)) if known else math.nan


def is_resolved(df: pd.DataFrame) -> np.ndarray:
    """Per row: does its sample resolve it? (no ``resolved`` column, or a null, means yes)."""
    if "resolved" not in df.columns:
        return np.ones(len(df), dtype=bool)
    return np.array([plain(v) is None or bool(v) for v in df["resolved"]], dtype=bool)


def needed(df: pd.DataFrame) -> float:
    """The largest ``n_needed`` of the rows (NaN if unknown)."""
    if "n_needed" not in df.columns:
        return math.nan
    vals = df["n_needed"].to_numpy(dtype=float, na_value=np.nan)
    return float(np.nanmax(vals)) if np.isfinite(vals).any() else math.nan


def _reduce(g: pd.DataFrame, how: str, at: bool, param: str) -> pd.Series:
    """One row for the group ``g``: ``at`` the min/max of ``param`` that row as it is; else the
    row of the min/max value, or the sum or mean of the values, resolved if every row it merges
    is, or (a pooled mean or sum: one statistic of all their draws) when Σ n_trials ≥ the largest
    ``n_needed``.
    """
    if at:
        pos = g[param].to_numpy(dtype=float, na_value=np.nan)
        if np.isnan(pos).all():
            return g.iloc[0].copy()
        return g.iloc[int(np.nanargmin(pos) if how == "min" else np.nanargmax(pos))].copy()
    row = _combine(g, how)
    if "resolved" in g.columns:
        ok = bool(is_resolved(g).all())
        need = needed(g)
        if not ok and how in ("mean", "sum") and math.isfinite(need) and "n_trials" in g.columns:
            ok = float(pd.to_numeric(g["n_trials"], errors="coerce").fillna(0).sum()) >= need
        row["resolved"] = ok
    if "n_needed" in g.columns:
        row["n_needed"] = needed(g)
    return row


#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054


def anytime_stderr(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with the standard error of each row drawn sequentially and stopped early
    (``stop`` = resolved) widened to its anytime-valid interval: half of ``cs_high − cs_low``
    over :data:`Z95`, when that is larger. A z from value ± stderr read at a data-dependent
    stopping time is not a valid test; the interval holds at every stopping time
    (docs/architecture.md#sequential-draws). Rows at the cap took every draw and keep theirs.
    """
    if not {"stop", "cs_low", "cs_high"} <= set(rows.columns):
        return rows
    half = (
        pd.to_numeric(rows["cs_high"], errors="coerce")
        - pd.to_numeric(rows["cs_low"], errors="coerce")
    ) / (2.0 * Z95)
    early = (rows["stop"] == "resolved").to_numpy(dtype=bool, na_value=False) & np.isfinite(
        half.to_numpy(dtype=float, na_value=np.nan)
    )
    if not early.any():
        return rows
    out = rows.copy()
    se = pd.to_numeric(out["stderr"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    out["stderr"] = np.where(early, np.fmax(se, half.to_numpy(dtype=float, na_value=np.nan)), se)
    return out


def _combine(g: pd.DataFrame, how: str) -> pd.Series:
    values = g["value"].to_numpy(dtype=float)
    ses = g["stderr"].to_numpy(dtype=float, na_value=np.nan)
    row = g.iloc[0].copy()
    if how in ("min", "max"):
        if np.isnan(values).all():
            row["value"] = math.nan
            return row
        return g.iloc[int(np.nanargmin(values) if how == "min" else np.nanargmax(values))].copy()
    k = len(values)
    row["n_trials"] = int(g["n_trials"].sum())
    for col in SEQUENTIAL_COLUMNS:  # one row's interval does not describe a sum or mean of rows
        if col in row.index:
            row[col] = None
    if how == "sum":
        row["value"] = float(values.sum())
        row["stderr"] = quadrature(*ses) if not np.isnan(ses).any() else math.nan
        return row
    row["value"] = float(values.mean())
    if not np.isnan(ses).any():
        row["stderr"] = math.sqrt(float((ses**2).sum())) / k
    else:  # the spread of the values themselves (e.g. over repetitions)
        se = standard_error(values)
        row["stderr"] = math.nan if se is None else se
    return row


def _aggregate_keys(df: pd.DataFrame, param: str, keep: list[str] | None) -> list[str]:
    """The columns an aggregate keeps apart: without ``keep`` every other key column; with ``keep``
    those, plus any column that varies among the rows sharing them and ``param`` (a data set's ``d``
    does not split an aggregate "over dataset").
    """
    others = [c for c in key_columns(df) if c != param]
    if keep is None:
        return others
    base = [c for c in keep if c in df.columns and c != param]
    return base + varies_within(df, [*base, param], [c for c in others if c not in base])


def aggregate(df: pd.DataFrame, spec: str | None, keep: list[str] | None = None) -> pd.DataFrame:
    """Reduce ``df`` by ``spec`` (``"max over theta"``, ``"at min v"``, ...) per other key: min/max
    keep the chosen row, a mean combines the standard errors (or uses the spread of the values); the
    aggregated parameter, and the columns a mean or sum merges, become null.
    """
    if not spec or df.empty:
        return df
    match = AGGREGATE.match(spec)
    if match is None:
        raise ValueError(f"bad aggregate {spec!r}")
    how, at_how, param = match.group(1), match.group(2), match.group(3)
    if param not in df.columns:
        return df
    keys = _aggregate_keys(df, param, keep)
    rows = [_reduce(g, how or at_how, at_how is not None, param) for _, g in groups(df, keys)]
    out = pd.DataFrame(rows).reset_index(drop=True).astype(df.dtypes.to_dict())
    merged = (
        [param] if how in (None, "min", "max") else [c for c in key_columns(df) if c not in keys]
    )
    for c in merged:
        out[c] = _nulls(df[c].dtype, len(out))
    return out


def _nulls(dtype: Any, n: int) -> pd.Series:
    """A column of ``n`` nulls of the kind of ``dtype`` (numpy ints become nullable Int64)."""
    if pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        return pd.Series([pd.NA] * n, dtype="Int64")
    if pd.api.types.is_float_dtype(dtype):
        return pd.Series([np.nan] * n, dtype=dtype)
    return pd.Series([None] * n, dtype=object)


def derive(rows: pd.DataFrame, baseline: pd.DataFrame, how: str) -> pd.DataFrame:
    """``rows`` with value = row − baseline (``difference``) or row / baseline (``ratio``).

    Rows are paired on the key columns that vary among both the rows and the baseline rows
    (constant ones, like the estimator's own ``weights``, are not compared).
    """
    if how == "value":
        return rows
    on = [c for c in varying(rows) if c in set(varying(baseline)) and c != "estimator"]
    baseline = baseline.assign(_bres=is_resolved(baseline))
    base = baseline[[*on, "value", "stderr", "_bres"]].rename(
        columns={"value": "_b", "stderr": "_bse"}
    )
    both = rows.merge(base, on=on, how="inner") if on else rows.merge(base, how="cross")
    a, b = both["value"].to_numpy(dtype=float), both["_b"].to_numpy(dtype=float)
    sa = both["stderr"].to_numpy(dtype=float, na_value=np.nan)
    sb = both["_bse"].to_numpy(dtype=float, na_value=np.nan)
    known = ~(np.isnan(sa) & np.isnan(sb))
    sa0, sb0 = np.nan_to_num(sa), np.nan_to_num(sb)
    with np.errstate(divide="ignore", invalid="ignore"):
        if how == "difference":
            value, se = a - b, np.sqrt(sa0**2 + sb0**2)
        else:
            value = a / b
            se = np.abs(value) * np.sqrt((sa0 / a) ** 2 + (sb0 / b) ** 2)
    both["value"], both["stderr"] = value, np.where(known, se, np.nan)
    if "resolved" in both.columns or not both["_bres"].all():
        both["resolved"] = is_resolved(both) & both["_bres"].to_numpy(dtype=bool)
    return both.drop(columns=["_b", "_bse", "_bres"])


def align(sides: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The points where every side has a row (columns ``value:<side>``, ``stderr:<side>``,
    ``resolved:<side>``, ``n_needed:<side>``), joined on the key columns that vary in both; a column
    constant in a side is broadcast (trig at m = 128 meets the hybrid at m = 16).
    """
    acc: pd.DataFrame | None = None
    acc_vary: set[str] = set()
    constants: dict[str, Any] = {}
    for name, df in sides.items():
        vary = set(varying(df))
        for c in key_columns(df):
            if c not in vary and c not in constants and len(df):
                constants[c] = df[c].iloc[0]
        cols = sorted(vary)
        small = df[[*cols, "value", "stderr"]].rename(
            columns={"value": f"value:{name}", "stderr": f"stderr:{name}"}
        )
        needs = df["n_needed"] if "n_needed" in df.columns else pd.Series(np.nan, index=df.index)
        small[f"resolved:{name}"] = is_resolved(df)
        small[f"n_needed:{name}"] = needs.to_numpy(dtype=float, na_value=np.nan)
        # sequentially drawn rows (stop = resolved): the anytime-valid interval of the declared
        # comparison (versus minus this side), read by checks.sequential_status
        for col in ("stop", "versus", "diff_low", "diff_high", "p_anytime"):
            if col in df.columns:
                small[f"{col}:{name}"] = df[col].to_numpy()
        if acc is None:
            acc = small
        else:
            on = sorted(acc_vary & vary)
            acc = acc.merge(small, on=on, how="inner") if on else acc.merge(small, how="cross")
        acc_vary |= vary
    if acc is None:
        return pd.DataFrame()
    acc = acc.reset_index(drop=True)
    broadcast = {c: [v] * len(acc) for c, v in constants.items() if c not in acc.columns}
    return pd.concat([acc, pd.DataFrame(broadcast, index=acc.index)], axis=1) if broadcast else acc


def params_of(row: Mapping[str, Any]) -> dict[str, float]:
    """The numeric, non-null columns of a row: names for check expressions."""
    out = {}
    for key, val in row.items():
        v = plain(val)
        if isinstance(v, int | float) and not isinstance(v, bool) and ":" not in str(key):
            out[str(key)] = float(v)
    return out
