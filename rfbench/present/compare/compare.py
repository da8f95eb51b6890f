"""``rfbench compare A B``: two result folders (or files) row by row, each shared row's B − A
judged against its standard error, family-wise across rows; the rules are in
docs/architecture.md#compare."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from rfbench.compute.checks import UserError
from rfbench.compute.results import DERIVED_COLUMNS, load_results, result_paths
from rfbench.compute.schema import TIMING_METRICS
from rfbench.present.compare.inputs import (
    ResultFile,
    check_fits,
    config_diff,
    describe_diff,
    read_result_file,
)
from rfbench.present.statistics import holm

#: the measured columns; every other column identifies a row
MEASURED = ("value", "stderr", "n_trials")
#: relative difference below which two values without a standard error are the same number
EXACT_RTOL = 1e-9
#: ... or absolute, as a share of the largest |value| of the row's metric in the file
EXACT_METRIC_ATOL = 1e-12
METHODS = ("holm", "bonferroni", "none")
#: the columns compare computes for a shared row; an identifying column of the same name is
#: carried as ``<name> (row)`` (attention results have a column ``kind``)
COMPUTED = ("value_a", "value_b", "se_a", "se_b", "diff", "se", "z", "p", "flagged", "kind")
ROW_SUFFIX = " (row)"
#: labels of the helper columns pairing rows: no result column's (its name is a string)
REPEAT, PARTNER = 0, 1
#: what a shared row is: tested against its noise, compared exactly, a timing, a value that is
#: non-finite on either side, or a statistic without a standard error over different numbers of
#: draws (``n_trials``; runs of different configs), which neither test can judge
KINDS = ("noisy", "exact", "timing", "non-finite", "untested")


@dataclass
class FileComparison:
    """One result file in A and B: its ``shared`` rows (identifying columns, ``value_a``,
    ``value_b``, ``se_a``, ``se_b``, ``diff``, ``se``, ``z``, ``p``, ``flagged``, ``kind`` of
    :data:`KINDS`), the rows ``new`` in B and ``missing`` from it (one config) or ``outside_a`` /
    ``outside_b`` the other side's config (configs differ: ``config_diff``, key → (A, B)), and
    ``timing`` (jobs' seconds ``wall_a``, ``wall_b``, ``cpu_a``, ``cpu_b`` and their ``ratio`` B/A,
    None over different work).
    """

    name: str
    shared: pd.DataFrame
    new: pd.DataFrame
    missing: pd.DataFrame
    timing: dict[str, float | None] = field(default_factory=dict)
    config_diff: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    outside_a: pd.DataFrame = field(default_factory=pd.DataFrame)
    outside_b: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def flagged(self) -> pd.DataFrame:
        return self.shared[self.shared["flagged"]]

    @property
    def outside(self) -> int:
        """Rows one side has and the other side's (different) config may never have asked for."""
        return len(self.outside_a) + len(self.outside_b)


@dataclass
class Comparison:
    """Every result file of A and B compared: ``files`` in both, ``only_a`` / ``only_b`` (file
    names), the chosen ``z`` and ``method``, and ``tests`` (rows tested with a standard error).
    """

    files: list[FileComparison]
    only_a: list[str]
    only_b: list[str]
    z: float
    method: str
    tests: int

    def flagged_count(self) -> int:
        return sum(len(f.flagged) for f in self.files)

    def missing_count(self) -> int:
        return sum(len(f.missing) for f in self.files)

    def differing(self) -> list[FileComparison]:
        """Files whose runs had different configs."""
        return [f for f in self.files if f.config_diff]

    def slower(self, factor: float) -> list[FileComparison]:
        """Files whose timing ratio B/A exceeds ``factor``."""
        return [f for f in self.files if (f.timing.get("ratio") or 0.0) > factor]

    def per_row_z(self) -> float:
        """The per-row |z| a Bonferroni flag needs (Holm's first step; the chosen z without a
        correction)."""
        if self.method == "none" or self.tests <= 1:
            return self.z
        return float(stats.norm.isf(family_alpha(self.z) / (2 * self.tests)))


def family_alpha(z: float) -> float:
    """The two-sided error rate of |Z| > z for a standard normal Z."""
    return float(2 * stats.norm.sf(z))


def _files(path: Path) -> dict[str, Path]:
    if path.is_file():
        return {path.name: path}
    if path.is_dir():
        found = {f"{p.parent.name}/{p.name}": p for p in result_paths(path)}
        if not found:
            raise UserError(f"{path} holds no result files (<experiment>/<name>.parquet)")
        odd = next((p for p in found.values() if not p.is_file()), None)
        if odd is not None:  # a folder, a FIFO (reading it would wait forever), a device
            raise UserError(f"{odd} is not a regular file; move it out of {path}")
        return found
    raise UserError(f"{path} is neither a result file nor a results folder")


def as_text(col: pd.Series, labelled: str) -> list[str]:
    """Each value as "name=value" with ``labelled`` the column name (floats to 4 significant
    digits), "" for a missing or empty one."""
    out = []
    for v in col.astype(object).tolist():
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) or v == "":
            out.append("")
        else:
            out.append(f"{labelled}={v:.4g}" if isinstance(v, float) else f"{labelled}={v}")
    return out


def _numbered(rows: pd.DataFrame, keys: list[str], other: pd.DataFrame) -> pd.DataFrame:
    """The identifying values of each row (a missing value and an empty text alike; as objects
    where the ``other`` table's dtype differs) and its repeat number among the rows of equal
    values (the i-th repeat in A pairs with B's i-th)."""
    key = rows[keys].astype({k: object for k in keys if rows[k].dtype != other[k].dtype})
    key = key.mask(key.eq(""))
    key[REPEAT] = key.groupby(keys, dropna=False).cumcount() if keys else np.arange(len(rows))
    return key


def check_columns(rows: pd.DataFrame, where: str) -> None:
    """Refuse a table holding both a column named as a computed one and ``<name> (row)``, the
    name compare carries the first under (:class:`UserError` naming ``where``)."""
    for name in COMPUTED:
        if name in rows.columns and name + ROW_SUFFIX in rows.columns:
            raise UserError(f"{where} has columns {name!r} and {name + ROW_SUFFIX!r}; compare "
                            f"needs the second name for the first: rename it")  # fmt: skip


def _as_float(col: pd.Series) -> pd.Series:
    return pd.Series(col.to_numpy(dtype=float, na_value=np.nan))


def compare_rows(
    a: pd.DataFrame, b: pd.DataFrame, derived: Collection[str] = DERIVED_COLUMNS
) -> tuple[pd.DataFrame, ...]:
    """(shared, new, missing) rows of two result tables, before any flag.

    Parameters
    ----------
    a, b : DataFrame
        Result rows (docs/architecture.md#result-schema).
    derived : collection of str
        Columns computed from a row's measurement (not part of its identity).

    Returns
    -------
    shared, new, missing : DataFrame
        As :class:`FileComparison`'s (``shared`` without ``p`` and ``flagged``).
    """
    check_columns(a, "result table A")
    check_columns(b, "result table B")
    columns = list(dict.fromkeys([*a.columns, *b.columns]))
    keys = [c for c in columns if c not in MEASURED and c not in derived]
    a = a.reindex(columns=columns).reset_index(drop=True)
    b = b.reindex(columns=columns).reset_index(drop=True)
    b_rows = _numbered(b, keys, a)
    b_rows[PARTNER] = np.arange(len(b))
    pairs = _numbered(a, keys, b).merge(b_rows, how="left", on=[*keys, REPEAT])
    partner = pairs[PARTNER].fillna(-1).to_numpy(dtype=int)
    in_b, in_a = partner >= 0, np.isin(np.arange(len(b)), partner)
    both_a, both_b = a[in_b], b.iloc[partner[in_b]]
    va, vb = _as_float(both_a["value"]), _as_float(both_b["value"])
    sa, sb = _as_float(both_a["stderr"]), _as_float(both_b["stderr"])
    se = np.sqrt(sa.fillna(0.0) ** 2 + sb.fillna(0.0) ** 2).where(sa.notna() | sb.notna())
    with np.errstate(invalid="ignore", over="ignore"):
        diff = vb - va
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / se, np.where(diff == 0, 0.0, np.sign(diff) * np.inf))
    z = pd.Series(z).where(se.notna())
    timing = (both_a["metric"].isin(TIMING_METRICS).to_numpy() if "metric" in both_a
              else np.zeros(len(both_a), bool))  # fmt: skip
    finite = np.isfinite(va) & np.isfinite(vb) & ~np.isinf(sa) & ~np.isinf(sb)
    # an SE at round-off of the value (a deterministic estimator's repeated draws) is no noise
    noisy = se.notna() & (se > EXACT_RTOL * np.fmax(va.abs(), vb.abs()))
    draws_a, draws_b = _as_float(both_a["n_trials"]), _as_float(both_b["n_trials"])
    untested = se.isna() & (draws_a.fillna(-1) != draws_b.fillna(-1))
    kind = np.select(
        [timing, ~finite, untested, noisy], ["timing", "non-finite", "untested", "noisy"], "exact"
    )
    renamed = {k: k + ROW_SUFFIX for k in keys if k in COMPUTED}
    shared = both_a[keys].reset_index(drop=True).rename(columns=renamed)
    shared = shared.assign(
        value_a=va, value_b=vb, se_a=sa, se_b=sb, diff=diff, se=se, z=z, kind=kind
    )
    return (
        shared,
        b[~in_a].reset_index(drop=True),
        a[~in_b].reset_index(drop=True),
    )


def _finiteness(value: pd.Series, stderr: pd.Series) -> np.ndarray:
    """How each value (and its SE) is non-finite: "nan", "+inf", "-inf" or "" (finite), then
    "/inf" if its SE is infinite."""
    v = value.to_numpy(dtype=float)
    state = np.select([np.isnan(v), v == np.inf, v == -np.inf], ["nan", "+inf", "-inf"], "")
    return np.char.add(state, np.where(np.isinf(stderr.to_numpy(dtype=float)), "/inf", ""))


def check_test(z: float, method: str) -> None:
    """Refuse (:class:`UserError`) a z that is not a positive number or an unknown method."""
    if not (z > 0 and math.isfinite(z)):
        raise UserError(f"--z must be a positive number, got {z}")
    if method not in METHODS:
        raise UserError(f"--method must be one of {', '.join(METHODS)}, got {method!r}")


def flag_rows(shared: Sequence[pd.DataFrame], z: float, method: str = "holm") -> int:
    """Set ``p`` and ``flagged`` in place on the :func:`compare_rows` tables ``shared``, the noisy
    rows family-wise at the chosen ``z`` by ``method`` (the rules: docs/architecture.md#compare);
    return the family size.
    """
    check_test(z, method)
    p_all = []
    for table in shared:
        noisy = table["kind"] == "noisy"
        table["p"] = np.where(noisy, 2 * stats.norm.sf(np.abs(table["z"].fillna(0.0))), np.nan)
        scale = np.maximum(np.abs(table["value_a"]), np.abs(table["value_b"]))
        by = table["metric"] if "metric" in table else pd.Series(0, index=table.index)
        metric_scale = scale.where(np.isfinite(scale)).groupby(by).transform("max")
        same = (table["value_a"] == table["value_b"]) | (
            np.abs(table["diff"]) <= np.fmax(EXACT_RTOL * scale, EXACT_METRIC_ATOL * metric_scale)
        )
        moved = _finiteness(table["value_a"], table["se_a"]) != _finiteness(
            table["value_b"], table["se_b"]
        )
        table["flagged"] = ((table["kind"] == "exact") & ~same) | (
            (table["kind"] == "non-finite") & moved
        )
        p_all.append(table.loc[noisy, "p"].to_numpy())
    p = np.concatenate(p_all) if p_all else np.empty(0)
    n = len(p)
    alpha = family_alpha(z)
    per_row = {"none": alpha, "bonferroni": alpha / max(n, 1)}
    hit = p < per_row[method] if method in per_row else holm(p, alpha)
    start = 0
    for table, part in zip(shared, p_all, strict=True):
        noisy = table["kind"] == "noisy"
        table.loc[noisy, "flagged"] = hit[start : start + len(part)]
        start += len(part)
    return n


def _timing(a: ResultFile, b: ResultFile, same_work: bool) -> dict[str, float | None]:
    """Jobs' seconds of both sides and the ratio B/A (CPU, else wall; None over different
    work)."""
    out = {
        f"{s}_{x}": f.timing[f"jobs_{s}_s"]
        for s in ("wall", "cpu")
        for x, f in (("a", a), ("b", b))
    }
    sides = [
        s for s in ("cpu", "wall") if same_work and out[f"{s}_a"] and out[f"{s}_b"] is not None
    ]
    out["ratio"] = out[f"{sides[0]}_b"] / out[f"{sides[0]}_a"] if sides else None
    return out


def _compare_file(name: str, a: ResultFile, b: ResultFile) -> FileComparison:
    rows_a, rows_b = load_results(a.path), load_results(b.path)
    check_columns(rows_a, f"result file {a.path}")
    check_columns(rows_b, f"result file {b.path}")
    shared, new, missing = compare_rows(rows_a, rows_b, a.derived | b.derived)
    differ = config_diff(a.config, b.config)
    timing = _timing(a, b, same_work=not differ)
    if not differ:
        return FileComparison(name, shared, new, missing, timing)
    return FileComparison(name, shared, new.iloc[:0], missing.iloc[:0], timing, differ,
                          outside_a=missing, outside_b=new)  # fmt: skip


def compare(
    a: str | Path,
    b: str | Path,
    z: float = 4.0,
    method: str = "holm",
    max_memory: int | None = None,
    across_configs: bool = False,
) -> Comparison:
    """Compare two result folders (or two result files) (docs/architecture.md#compare).

    Parameters
    ----------
    a, b : path
        Results folders (``<folder>/<experiment>/<name>.parquet``) or two result files.
    z : float
        Flag a row beyond this z, family-wise across all noisy rows.
    method : {"holm", "bonferroni", "none"}
    max_memory : int, optional
        Memory budget in bytes (default: half the available memory), checked before reading.
    across_configs : bool
        Compare files of different configs on the rows both have (else refused).

    Returns
    -------
    Comparison

    Raises
    ------
    UserError
        A bad argument, or a file that is unreadable, malformed, too large or of another config.
    """
    from rfbench.compute.memlimits import DEFAULT_FRACTION, available_memory

    check_test(z, method)
    pa, pb = Path(a), Path(b)
    if pa.is_file() != pb.is_file():
        raise UserError("compare two results folders or two result files, not one of each")
    files_a, files_b = _files(pa), _files(pb)
    if pa.is_file():
        pairs = [(f"{pa.name} vs {pb.name}", pa, pb)]
    else:
        pairs = [(n, files_a[n], files_b[n]) for n in files_a if n in files_b]
    known = [(name, read_result_file(fa), read_result_file(fb)) for name, fa, fb in pairs]
    budget = max_memory or int(DEFAULT_FRACTION * available_memory())
    source = "--max-memory" if max_memory else "half the available memory; --max-memory sets it"
    check_fits([(fa, fb) for _, fa, fb in known], budget, source)
    differ = [(name, config_diff(fa.config, fb.config)) for name, fa, fb in known]
    differ = [(name, diff) for name, diff in differ if diff]
    if differ and not across_configs:
        name, diff = differ[0]
        raise UserError(
            f"A and B ran different configs in {len(differ)} of {len(known)} file(s) ({name}: "
            f"{describe_diff(diff, limit=3)}); compare runs of one config, or add "
            "--across-configs to compare the rows both have"
        )
    out = [_compare_file(name, fa, fb) for name, fa, fb in known]
    tests = flag_rows([f.shared for f in out], z, method)
    only_a = [] if pa.is_file() else [n for n in files_a if n not in files_b]
    only_b = [] if pa.is_file() else [n for n in files_b if n not in files_a]
    return Comparison(out, only_a, only_b, z, method, tests)


def gate_failures(result: Comparison, numbers: bool, slower: float | None) -> list[str]:
    """Why ``--fail-on`` fails (empty: it passes): with ``numbers``, a row flagged (moved beyond
    its noise, or non-finite on one side), a row of A missing in B, a file of A missing in B;
    with ``slower``, a file whose jobs took more than ``slower`` × A's time."""
    failed = []
    if numbers and result.flagged_count():
        failed.append(f"{result.flagged_count()} row(s) moved beyond their noise or became "
                      "non-finite")  # fmt: skip
    if numbers and result.missing_count():
        failed.append(f"{result.missing_count()} row(s) of A missing in B")
    if numbers and result.only_a:
        names = ", ".join(result.only_a[:3]) + (", …" if len(result.only_a) > 3 else "")
        failed.append(f"{len(result.only_a)} result file(s) of A missing in B ({names})")
    if slower is not None and result.slower(slower):
        names = ", ".join(f.name for f in result.slower(slower))
        failed.append(f"slower than {slower:g}× A: {names}")
    return failed


def parse_fail_on(values: Sequence[str]) -> tuple[bool, float | None]:
    """(fail on numbers, slower factor or None) from ``--fail-on`` values such as
    ``numbers``, ``slower:1.5`` or ``numbers,slower:2``."""
    numbers, slower = False, None
    for value in values:
        for item in filter(None, (v.strip() for v in value.split(","))):
            if item == "numbers":
                numbers = True
            elif item.startswith("slower:"):
                try:
                    slower = float(item.partition(":")[2])
                except ValueError:
                    slower = None
                if slower is None or not slower > 0:
                    raise UserError(f"--fail-on {item!r}: slower needs a positive factor, "
                                    "e.g. slower:1.5")  # fmt: skip
            else:
                raise UserError(f"--fail-on {item!r}: expected 'numbers' or 'slower:FACTOR'")
    return numbers, slower
