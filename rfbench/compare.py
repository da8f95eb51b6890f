"""``rfbench compare A B``: two result folders (or files) side by side
(docs/architecture.md#compare).

Rows are matched by every column except the measurement (``value``, ``stderr``, ``n_trials``)
and the columns derived from it (``rfbench.results.DERIVED_COLUMNS``: a z against a baseline,
whether the sample resolves the row); a row that appears several times with the same columns is
matched by its occurrence. For every shared row the difference B − A gets the standard error
SE = √(se_A² + se_B²) and z = (B − A)/SE. A row is *flagged* when its z is beyond the chosen
``z`` after a family-wise correction across all rows compared: ``z`` sets the family-wise error
rate α = 2(1 − Φ(z)) (two-sided), and Holm's step-down (default) or Bonferroni's α/n decides per
row.
Rows without a standard error, or with one below 1e-9 of their value (exact quantities: true
values, closed forms, FLOPs, a deterministic estimator's repeated draws) are flagged
when they differ beyond float round-off: relative 1e-9, or 1e-12 of the largest value of their
metric in the file (an exact zero computed as 1e-15 is round-off too). Timing rows (metrics
``time_s``, ``cpu_s``) are machine measurements, never flagged as numbers; they, and each
file's timing provenance (jobs' wall and CPU seconds, written by ``rfbench run`` and by the
benchmarks), give the timing ratios B/A.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from rfbench.errors import UserError
from rfbench.results import DERIVED_COLUMNS, load_provenance, load_results, result_paths

#: the measured columns; every other column identifies a row
MEASURED = ("value", "stderr", "n_trials")
#: metrics that are timings of this machine, not results
TIMING_METRICS = frozenset({"time_s", "cpu_s"})
#: relative difference below which two values without a standard error are the same number
EXACT_RTOL = 1e-9
#: ... or absolute, as a share of the largest |value| of the row's metric in the file
EXACT_METRIC_ATOL = 1e-12
METHODS = ("holm", "bonferroni", "none")


@dataclass
class FileComparison:
    """One result file in A and B.

    Attributes
    ----------
    name : str
        ``<experiment>/<name>.parquet`` (or the file names when two files are compared).
    shared : DataFrame
        One row per shared row: its identifying columns, ``value_a``, ``value_b``, ``diff``,
        ``se`` (NaN without standard errors), ``z``, ``p`` (two-sided), ``flagged`` (bool) and
        ``kind`` (``"noisy"``, ``"exact"`` or ``"timing"``).
    new, missing : DataFrame
        Rows only in B, rows only in A (their identifying columns and value).
    timing : dict
        ``wall_a``, ``wall_b``, ``cpu_a``, ``cpu_b`` (jobs' seconds, None if not recorded) and
        ``ratio`` (CPU B/A, else wall B/A, else None).
    """

    name: str
    shared: pd.DataFrame
    new: pd.DataFrame
    missing: pd.DataFrame
    timing: dict[str, float | None] = field(default_factory=dict)

    @property
    def flagged(self) -> pd.DataFrame:
        return self.shared[self.shared["flagged"]]


@dataclass
class Comparison:
    """Every result file of A and B compared (see the module docstring).

    Attributes
    ----------
    files : list of FileComparison
        The files present in both.
    only_a, only_b : list of str
        Files present in one side only.
    z, method : float, str
        The chosen z and the family-wise correction.
    tests : int
        Rows tested with a standard error (the family size).
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
        return found
    raise UserError(f"{path} is neither a result file nor a results folder")


def _text(col: pd.Series, labelled: str | None = None) -> list[str]:
    """Each value as text (floats to 4 significant digits if ``labelled``, else exactly), "" for
    a missing one; with ``labelled`` = the column name, "name=value"."""
    values = col.astype(object).tolist()
    out = []
    for v in values:
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) or v == "":
            out.append("")
        elif labelled is None:
            out.append(repr(v) if isinstance(v, float) else str(v))
        else:
            out.append(f"{labelled}={v:.4g}" if isinstance(v, float) else f"{labelled}={v}")
    return out


def _keyed(rows: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Rows with a string key per row (identifying columns, then the occurrence number)."""
    columns = [_text(rows[k]) for k in keys]
    key = pd.Series(["\x1f".join(parts) for parts in zip(*columns, strict=True)]
                    if columns else [""] * len(rows), index=rows.index)  # fmt: skip
    occurrence = key.groupby(key).cumcount().astype(str)
    return rows.assign(_key=(key + "\x1e" + occurrence).to_numpy())


def compare_rows(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, ...]:
    """(shared, new, missing) rows of two result tables, before any flag.

    Parameters
    ----------
    a, b : DataFrame
        Result rows (docs/architecture.md#result-schema).

    Returns
    -------
    shared : DataFrame
        Identifying columns plus ``value_a``, ``value_b``, ``se_a``, ``se_b``, ``diff``, ``se``,
        ``z`` and ``kind``.
    new, missing : DataFrame
        Rows of B not in A, rows of A not in B.
    """
    columns = list(dict.fromkeys([*a.columns, *b.columns]))
    keys = [c for c in columns if c not in MEASURED and c not in DERIVED_COLUMNS]
    a = _keyed(a.reindex(columns=columns), keys)
    b = _keyed(b.reindex(columns=columns), keys)
    merged = a.merge(b[["_key", *MEASURED]], on="_key", how="outer", suffixes=("_a", "_b"),
                     indicator=True)  # fmt: skip
    both = merged[merged["_merge"] == "both"]
    new = b[b["_key"].isin(merged.loc[merged["_merge"] == "right_only", "_key"])]
    missing = a[a["_key"].isin(merged.loc[merged["_merge"] == "left_only", "_key"])]
    va, vb = both["value_a"].astype(float), both["value_b"].astype(float)
    sa, sb = both["stderr_a"].astype(float), both["stderr_b"].astype(float)
    se = np.sqrt(sa.fillna(0.0) ** 2 + sb.fillna(0.0) ** 2).where(sa.notna() | sb.notna())
    diff = vb - va
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / se, np.where(diff == 0, 0.0, np.sign(diff) * np.inf))
    z = pd.Series(z, index=both.index).where(se.notna())
    timing = both["metric"].isin(TIMING_METRICS) if "metric" in both else False
    # an SE at round-off of the value (a deterministic estimator's repeated draws) is no noise
    noisy = se.notna() & (se > EXACT_RTOL * np.fmax(va.abs(), vb.abs()))
    kind = np.where(timing, "timing", np.where(noisy, "noisy", "exact"))
    shared = both[keys].assign(
        value_a=va, value_b=vb, se_a=sa, se_b=sb, diff=diff, se=se, z=z, kind=kind
    )
    return (
        shared.reset_index(drop=True),
        new.drop(columns=["_key"]).reset_index(drop=True),
        missing.drop(columns=["_key"]).reset_index(drop=True),
    )


def flag_rows(shared: Sequence[pd.DataFrame], z: float, method: str = "holm") -> int:
    """Set ``p`` and ``flagged`` in place on every table; return the family size.

    Noisy rows (with a standard error) are tested together: two-sided p = 2(1 − Φ(|z|)), flagged
    at family-wise level α = 2(1 − Φ(z)) by Holm's step-down, Bonferroni's α/n, or (``none``) per
    row |z| > z. Exact rows are flagged when they differ by more than a relative 1e-9 and by more
    than 1e-12 of the largest |value| of their metric in the table; timing rows never.

    Parameters
    ----------
    shared : sequence of DataFrame
        Tables from :func:`compare_rows`.
    z : float
        The chosen z (> 0).
    method : {"holm", "bonferroni", "none"}
    """
    if not (z > 0 and math.isfinite(z)):
        raise UserError(f"--z must be a positive number, got {z}")
    if method not in METHODS:
        raise UserError(f"--method must be one of {', '.join(METHODS)}, got {method!r}")
    p_all = []
    for table in shared:
        noisy = table["kind"] == "noisy"
        table["p"] = np.where(noisy, 2 * stats.norm.sf(np.abs(table["z"].fillna(0.0))), np.nan)
        table["flagged"] = False
        exact = table["kind"] == "exact"
        scale = np.maximum(np.abs(table["value_a"]), np.abs(table["value_b"]))
        by = table["metric"] if "metric" in table else pd.Series(0, index=table.index)
        metric_scale = scale.where(np.isfinite(scale)).groupby(by).transform("max")
        same = (table["value_a"] == table["value_b"]) | (
            np.abs(table["diff"]) <= np.fmax(EXACT_RTOL * scale, EXACT_METRIC_ATOL * metric_scale)
        )
        both_nan = table["value_a"].isna() & table["value_b"].isna()
        table.loc[exact & ~(same | both_nan), "flagged"] = True
        p_all.append(table.loc[noisy, "p"].to_numpy())
    p = np.concatenate(p_all) if p_all else np.empty(0)
    n = len(p)
    alpha = family_alpha(z)
    if method == "none":
        hit = p < alpha
    elif method == "bonferroni":
        hit = p < alpha / max(n, 1)
    else:  # Holm: reject the k-th smallest while p_(k) < α/(n − k)
        order = np.argsort(p, kind="stable")
        passed = p[order] < alpha / (n - np.arange(n))
        stop = int(np.argmin(passed)) if not passed.all() else n
        hit = np.zeros(n, bool)
        hit[order[:stop]] = True
    start = 0
    for table, part in zip(shared, p_all, strict=True):
        noisy = table["kind"] == "noisy"
        table.loc[noisy, "flagged"] = hit[start : start + len(part)]
        start += len(part)
    return n


def _timing(prov_a: Mapping[str, Any], prov_b: Mapping[str, Any]) -> dict[str, float | None]:
    def get(prov: Mapping[str, Any], key: str) -> float | None:
        value = (prov.get("timing") or {}).get(key)
        return float(value) if value is not None else None

    out = {
        "wall_a": get(prov_a, "jobs_wall_s"),
        "wall_b": get(prov_b, "jobs_wall_s"),
        "cpu_a": get(prov_a, "jobs_cpu_s"),
        "cpu_b": get(prov_b, "jobs_cpu_s"),
    }
    ratio = None
    for side in ("cpu", "wall"):
        x, y = out[f"{side}_a"], out[f"{side}_b"]
        if x and y is not None:
            ratio = y / x
            break
    out["ratio"] = ratio
    return out


def compare(a: str | Path, b: str | Path, z: float = 4.0, method: str = "holm") -> Comparison:
    """Compare two result folders (or two result files).

    Parameters
    ----------
    a, b : path
        Results folders (``<folder>/<experiment>/<name>.parquet``) or single result files (then
        compared with each other whatever their names).
    z : float
        Flag a row beyond this z, family-wise across all noisy rows (see ``flag_rows``).
    method : {"holm", "bonferroni", "none"}

    Returns
    -------
    Comparison
    """
    from rfbench.experiments import list_experiments

    list_experiments()  # registers every experiment's columns, the derived ones among them
    pa, pb = Path(a), Path(b)
    if pa.is_file() != pb.is_file():
        raise UserError("compare two results folders or two result files, not one of each")
    files_a, files_b = _files(pa), _files(pb)
    if pa.is_file():
        pairs = [(f"{pa.name} vs {pb.name}", pa, pb)]
    else:
        pairs = [(n, files_a[n], files_b[n]) for n in files_a if n in files_b]
    out = []
    for name, fa, fb in pairs:
        shared, new, missing = compare_rows(load_results(fa), load_results(fb))
        out.append(
            FileComparison(name, shared, new, missing, _timing(load_provenance(fa),
                                                               load_provenance(fb)))
        )  # fmt: skip
    tests = flag_rows([f.shared for f in out], z, method)
    only_a = [] if pa.is_file() else [n for n in files_a if n not in files_b]
    only_b = [] if pa.is_file() else [n for n in files_b if n not in files_a]
    return Comparison(out, only_a, only_b, z, method, tests)


# ------------------------------------------------------------------------------------ output


def summary_table(result: Comparison) -> pd.DataFrame:
    """One row per file: rows shared / flagged / new / missing, jobs' CPU seconds, ratio B/A."""
    rows = []
    for f in result.files:
        t = f.timing
        rows.append({
            "file": f.name,
            "shared": len(f.shared),
            "flagged": len(f.flagged),
            "new": len(f.new),
            "missing": len(f.missing),
            "seconds A": t.get("cpu_a") if t.get("cpu_a") is not None else t.get("wall_a"),
            "seconds B": t.get("cpu_b") if t.get("cpu_b") is not None else t.get("wall_b"),
            "time B/A": t.get("ratio"),
        })  # fmt: skip
    return pd.DataFrame(rows)


def _row_labels(table: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """ "k=v k=v …" per row from the identifying columns (missing values left out)."""
    columns = [_text(table[k], labelled=k) for k in keys]
    if not columns:
        return [""] * len(table)
    return [" ".join(filter(None, parts)) for parts in zip(*columns, strict=True)]


def row_table(
    result: Comparison, only_flagged: bool = False, limit: int | None = None, moved: bool = False
) -> pd.DataFrame:
    """Shared rows of every file (only the flagged ones, or only those whose value differs if
    ``moved``), flagged exact changes first, then largest |z|.

    Returns
    -------
    DataFrame with columns ``file``, ``row`` (its identifying columns), ``A``, ``B``, ``B − A``,
    ``SE``, ``z``, ``flag``.
    """
    parts = []
    for f in result.files:
        table = f.flagged if only_flagged else f.shared
        if moved:
            table = table[(table["value_a"] != table["value_b"]) & table["diff"].notna()]
        if not len(table):
            continue
        keys = [c for c in table.columns if c not in (
            "value_a", "value_b", "se_a", "se_b", "diff", "se", "z", "p", "flagged", "kind",
            "experiment", "figure")]  # fmt: skip
        parts.append(pd.DataFrame({
            "file": f.name,
            "row": _row_labels(table, keys),
            "A": table["value_a"].to_numpy(),
            "B": table["value_b"].to_numpy(),
            "B − A": table["diff"].to_numpy(),
            "SE": table["se"].to_numpy(),
            "z": table["z"].to_numpy(),
            "flag": np.where(table["flagged"], "✗", np.where(table["kind"] == "timing", "time",
                                                             "")),
            "_order": np.where(table["kind"] == "exact", np.inf * table["flagged"],
                               np.abs(table["z"].fillna(0.0))),
        }))  # fmt: skip
    if not parts:
        return pd.DataFrame(columns=["file", "row", "A", "B", "B − A", "SE", "z", "flag"])
    out = pd.concat(parts, ignore_index=True)
    out = out.sort_values("_order", ascending=False, kind="stable").drop(columns="_order")
    return out.head(limit) if limit is not None else out


def changed_rows(result: Comparison, which: str) -> pd.DataFrame:
    """``which`` = "new" or "missing": those rows of every file (file, row, value)."""
    parts = []
    for f in result.files:
        table = getattr(f, which)
        if not len(table):
            continue
        keys = [c for c in table.columns if c not in (*MEASURED, "experiment", "figure")]
        parts.append(pd.DataFrame({
            "file": f.name,
            "row": _row_labels(table, keys),
            "value": table["value"].to_numpy(dtype=float),
        }))  # fmt: skip
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["file", "row", "value"])  # fmt: skip


def _md_cell(value: Any) -> str:
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else f"{value:.4g}"
    return str(value).replace("|", "\\|")


def _md_table(frame: pd.DataFrame) -> str:
    if not len(frame):
        return "(none)\n"
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |",
             "|" + "---|" * len(frame.columns)]  # fmt: skip
    lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]  # fmt: skip
    return "\n".join(lines) + "\n"


def markdown(result: Comparison, a: str, b: str) -> str:
    """The whole comparison as a markdown document (every shared row included)."""
    flagged = result.flagged_count()
    out = [
        f"# rfbench compare: `{a}` (A) vs `{b}` (B)\n",
        f"{result.tests} rows with standard errors tested at z = {result.z:g} family-wise "
        f"({result.method}; per-row |z| ≥ {result.per_row_z():.2f} at Bonferroni's level); "
        f"{flagged} row(s) flagged, {result.missing_count()} missing.\n",
        "## Files\n",
        _md_table(summary_table(result)),
    ]
    if result.only_a or result.only_b:
        out += ["\nOnly in A: " + (", ".join(result.only_a) or "none") + "  \n"
                "Only in B: " + (", ".join(result.only_b) or "none") + "\n"]  # fmt: skip
    out += ["\n## Flagged rows\n", _md_table(row_table(result, only_flagged=True))]
    out += ["\n## Missing rows (in A, not in B)\n", _md_table(changed_rows(result, "missing"))]
    out += ["\n## New rows (in B, not in A)\n", _md_table(changed_rows(result, "new"))]
    out += ["\n## Every shared row\n", _md_table(row_table(result))]
    return "\n".join(out)


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
