"""The shared machinery of a claim's check: each side's rows picked, split into ``for_each``
groups and aligned point by point (:func:`rfbench.present.report.frames.align`), every aligned
point one comparison decided by :func:`compare_le` (the report's one decision rule, stated in its
"How to read this report"); the per-kind rules are found by
:data:`rfbench.present.report.claims.KINDS`.

A comparison resting on a sample that does not resolve its statistic (``resolved`` false) is left
out; a check with nothing else is "untestable at this sample size", never "does not hold".
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rfbench.present.reference import ClaimEntry, evaluate_expr
from rfbench.present.reference.loader import Check
from rfbench.present.report.frames import (
    align,
    groups,
    params_of,
    plain,
    quadrature,
    sort_key,
    varying,
)
from rfbench.present.report.rows import Picked, pick
from rfbench.present.report.verdicts import (
    FAIL,
    NO_MATCH,
    NOISE,
    NOT_RUN,
    PASS,
    UNRESOLVED,
    WEAK,
    Z_REPRODUCED,
    NumberResult,
    Outcome,
)

#: Relative slack of a non-strict comparison (floating-point round-off of closed forms).
EPS = 1e-12
#: Kinds comparing the values of ``by`` (default ``estimator``) with one another.
RANKINGS = frozenset({"ordering", "count"})
#: Smallest tolerance of an n_stderr comparison (floating-point round-off of exact values).
ROUND_OFF = 1e-10
#: Failures listed in a claim's detail.
SHOWN = 3
_RANK = {PASS: 0, WEAK: 1, NOISE: 2, FAIL: 3, UNRESOLVED: 4}
#: (verdict, why) of the groups that had no rows to compare.
Missing = list[tuple[str, str]]


def fmt_num(x: Any) -> str:
    """A number as the report prints it (4 significant digits)."""
    v = plain(x)
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def fmt_key(key: Mapping[str, Any], nulls: bool = False) -> str:
    """A group or point key: ``r=1.5, m=128`` (nulls left out unless ``nulls``)."""
    shown = {k: v for k, v in key.items() if nulls or plain(v) is not None}
    return ", ".join(
        f"{k}={fmt_num(v) if plain(v) is not None else 'null'}" for k, v in shown.items()
    )


@dataclass(frozen=True)
class Unit:
    """One comparison: its place, its status (pass | fail | noise) and what was compared."""

    where: str
    status: str
    detail: str = ""
    needed: float = math.nan


def resolution(pt: pd.Series, names: Sequence[str]) -> tuple[bool, float]:
    """(all resolved, largest n_needed) of the sides ``names`` at an aligned point (the name
    ``""``: the row's own ``resolved`` and ``n_needed``)."""
    ok, need = True, math.nan
    for name in names:
        suffix = f":{name}" if name else ""
        res = plain(pt.get(f"resolved{suffix}"))
        ok &= res is None or bool(res)
        n = plain(pt.get(f"n_needed{suffix}"))
        if not (res is None or bool(res)) and n is not None and not math.isnan(float(n)):
            need = float(n) if math.isnan(need) else max(need, float(n))
    return ok, need


#: The factor by which an unresolved mean of nonnegative draws must already exceed the other
#: side before it decides a failure (:func:`judged`).
OVERSHOOT = 2.0
#: Means of nonnegative draws (or increasing functions of one): a sample missing the tail
#: *under*estimates them.
UNDERESTIMATED = frozenset(
    {"mse", "rel_rmse", "rel_mae", "frob_sq", "frob_sq_per_entry", "rel_frob", "mse_mean"}
)


def judged(
    where: str,
    status: str,
    detail: str,
    pt: pd.Series,
    names: Sequence[str],
    small: str | None = None,
    metric: str | None = None,
) -> Unit:
    """A comparison, unresolved when any of its sides rests on an unresolved sample; except that the
    claim "``small`` ≤ the other" of an :data:`UNDERESTIMATED` ``metric`` fails when only ``small``
    is unresolved and already beyond 2 combined standard errors and :data:`OVERSHOOT` times the
    other.
    """
    ok, need = resolution(pt, names)
    if ok:
        return Unit(where, status, detail)
    bad = [n for n in names if not resolution(pt, [n])[0]]
    label = ", ".join(n or "value" for n in bad)
    others = [n for n in names if n != small]
    if status == FAIL and bad == [small] and metric in UNDERESTIMATED and len(others) == 1:
        mine, theirs = float(pt[f"value:{small}"]), float(pt[f"value:{others[0]}"])
        if mine >= OVERSHOOT * theirs:
            why = (
                f"{label} unresolved, but already {mine / theirs:.3g}× the other (≥ "
                f"{OVERSHOOT:g}×, > 2 se) and its sample underestimates a mean of nonnegative draws"
            )
            return Unit(where, FAIL, f"{detail} ({why})")
    return Unit(where, UNRESOLVED, f"{detail} (unresolved: {label})", need)


def passed(status: str) -> bool:
    """Did a comparison go the claimed way (significantly or not)?"""
    return status in (PASS, WEAK)


def compare_le(a: float, b: float, sa: Any, sb: Any, strict: bool) -> tuple[str, float]:
    """(status, z) of the claim a < b (``strict``) or a ≤ b, z = violation / combined se: ``PASS``
    by at least :data:`Z_REPRODUCED` se (or exact values), else ``WEAK``; a failure ``FAIL`` beyond
    :data:`Z_REPRODUCED` se, else ``NOISE``.
    """
    if not (math.isfinite(a) and math.isfinite(b)):
        return (PASS if a < b or (not strict and a == b) else FAIL), math.inf
    ok = a < b if strict else a <= b + EPS * max(abs(a), abs(b))
    if ok:
        se = quadrature(sa, sb)
        if se == 0.0 or (math.isfinite(se) and (b - a) / se >= Z_REPRODUCED):
            return PASS, 0.0
        return WEAK, 0.0
    se = quadrature(sa, sb)
    z = (a - b) / se if se > 0 else math.inf
    return (NOISE if z <= Z_REPRODUCED else FAIL), z


def sequential_status(pt: pd.Series, est: str, other: str, tol: float, best: str) -> str | None:
    """The status of "``est`` is at least as good as ``other``" (``best`` max: larger is better;
    min: smaller) from the anytime-valid interval the rows carry, when ``other``'s row was drawn
    sequentially (``stop`` resolved or cap) with ``versus`` = ``est``: its ``diff_low`` and
    ``diff_high`` bound ``est − other`` (docs/architecture.md#sequential-draws). ``PASS`` when
    the interval lies wholly on the claimed side of ``−tol``, ``FAIL`` wholly on the other,
    else ``WEAK`` / ``NOISE`` by the point estimates' side; None when the rows carry no such
    interval (a fixed-``trials`` row) or it is unresolved at the cap (every draw taken): the z
    test of :func:`compare_le`, as with fixed draws.
    """
    stop = pt.get(f"stop:{other}")
    if pt.get(f"versus:{other}") != est or stop not in ("resolved", "cap"):
        return None
    low, high = float(pt[f"diff_low:{other}"]), float(pt[f"diff_high:{other}"])
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    if best == "min":  # est − other ≤ tol is the claim: read other − est ≥ −tol
        low, high = -high, -low
    mean = float(pt[f"value:{est}"]) - float(pt[f"value:{other}"])
    mean = -mean if best == "min" else mean
    if low + tol > 0:
        return PASS
    if high + tol < 0:
        return FAIL
    if stop == "cap":  # unresolved at the cap: every draw was taken, read as with fixed draws
        return None
    return WEAK if mean + tol >= 0 else NOISE


def expression(expr: str, row: Mapping[str, Any]) -> float:
    """A check expression at a point (its numeric columns are the names)."""
    return evaluate_expr(expr, params_of(row))


@dataclass
class Context:
    """A claim's check, its rows (experiment ∩ ``where``) and the evaluated numbers."""

    entry: ClaimEntry
    rows: pd.DataFrame
    numbers: Mapping[str, NumberResult] = field(default_factory=dict)

    @property
    def check(self) -> Check:
        """The claim's parsed check."""
        return self.entry.check

    @property
    def for_each(self) -> list[str]:
        return list(self.check.for_each)

    def side(
        self,
        name: str | None,
        extra: Mapping[str, Any] | None = None,
        check_aggregate: bool = True,
    ) -> Picked:
        """The rows of one side: its selector over the check's rows, derived and aggregated."""
        selector = {"metric": self.check.metric, **self.check.sides.get(name or "", {})}
        selector.update(extra or {})
        default = self.check.aggregate if check_aggregate else None
        return pick(self.rows, selector, default, self.keep)

    @property
    def keep(self) -> list[str]:
        """Columns an aggregate must keep apart: ``for_each``, ``by`` (rankings), ``along``."""
        extra = [self.check.get("by", "estimator")] if self.check.kind in RANKINGS else []
        extra += [self.check["along"]] if "along" in self.check else []
        return [*self.for_each, *(c for c in extra if c not in self.for_each)]


def grouped(
    frames: Mapping[str, pd.DataFrame], for_each: list[str]
) -> Iterator[tuple[dict[str, Any], dict[str, pd.DataFrame]]]:
    """Each ``for_each`` group with the rows every frame has in it (absent frames left out)."""
    split = {
        name: {tuple(k.values()): g for k, g in groups(df, for_each)} for name, df in frames.items()
    }
    keys = {k: None for parts in split.values() for k in parts}
    for k in sorted(keys, key=sort_key):
        yield dict(zip(for_each, k, strict=True)), {n: p[k] for n, p in split.items() if k in p}


def summarise(units: list[Unit], missing: Missing, at_least: float | None = None) -> Outcome:
    """The outcome of a check from its comparisons (``at_least``: a fraction must pass) and the
    (verdict, why) of the groups that lacked rows.
    """
    if not units:
        kind = NO_MATCH if any(v == NO_MATCH for v, _ in missing) else NOT_RUN
        return Outcome(kind, "; ".join(t for _, t in missing[:SHOWN]) or "no rows to compare")
    unresolved = [u for u in units if u.status == UNRESOLVED]
    units = [u for u in units if u.status != UNRESOLVED]
    if not units:
        return _untestable(unresolved)
    failed = [u for u in units if u.status == FAIL]
    noisy = [u for u in units if u.status == NOISE]
    weak = [u for u in units if u.status == WEAK]
    n, n_pass = len(units), len(units) - len(failed) - len(noisy)
    if at_least is None:
        status = FAIL if failed else NOISE if noisy else WEAK if weak else PASS
    elif n_pass >= at_least * n:
        status = PASS if n_pass - len(weak) >= at_least * n else WEAK
    else:
        status = NOISE if n - len(failed) >= at_least * n else FAIL
    head = f"{n_pass} of {n} comparisons hold"
    if weak:
        head += (
            f" ({len(weak)} by less than {Z_REPRODUCED:g} standard errors or the declared "
            "effect size)"
        )
    if at_least is not None:
        head += f" (needs {at_least:.0%})"
    bad = failed + noisy + ([u for u in weak if u.detail] if status == WEAK else [])
    parts = [head] + [f"{u.where}: {u.detail}" if u.where else u.detail for u in bad[:SHOWN]]
    if len(bad) > SHOWN:
        parts.append(f"... {len(bad) - SHOWN} more")
    if missing:
        parts.append(f"{len(missing)} group(s) without rows (e.g. {missing[0][1]})")
    if unresolved:
        parts.append(
            f"{len(unresolved)} more comparison(s) left out: their samples do not resolve the "
            f"statistic (e.g. {unresolved[0].where})"
        )
    return Outcome(status, "; ".join(parts))


def _untestable(units: list[Unit]) -> Outcome:
    """Every comparison rests on unresolved rows: the n that would resolve them, if known."""
    needs = [u.needed for u in units if not math.isnan(u.needed)]
    head = f"all {len(units)} comparisons rest on samples that do not resolve the statistic"
    if needs:
        head += f"; resolving them needs n ≥ {max(needs):.3g} draws"
    shown = [f"{u.where}: {u.detail}" if u.where else u.detail for u in units[:SHOWN]]
    return Outcome(UNRESOLVED, "; ".join([head, *shown]))


def worst(a: str, b: str) -> str:
    """The worse of two statuses (unresolved > fail > noise > pass)."""
    return a if _RANK[a] >= _RANK[b] else b


def point_columns(pts: pd.DataFrame) -> list[str]:
    """The columns telling apart the aligned points of a group."""
    return [c for c in varying(pts) if ":" not in c]


def point_where(group: str, cols: list[str], pt: pd.Series) -> str:
    """Where a comparison is: its group and the columns telling its point apart."""
    return ", ".join(t for t in (group, fmt_key({c: pt[c] for c in cols})) if t)


def aligned(
    ctx: Context, picks: Mapping[str, Picked]
) -> tuple[list[tuple[str, pd.DataFrame]], Missing, Outcome | None]:
    """Per ``for_each`` group: the aligned points of all sides, or why a group has none (the
    first side that picked no rows: why there are none at all)."""
    for name, p in picks.items():
        if not p.ok:
            return [], [], Outcome(p.verdict, f"{name}: {p.detail}")
    out, missing = [], []
    for key, frames in grouped({n: p.rows for n, p in picks.items()}, ctx.for_each):
        where = fmt_key(key, nulls=True)
        absent = [n for n in picks if n not in frames]
        if absent:
            missing.append((NOT_RUN, f"{where}: no rows for {', '.join(absent)}"))
            continue
        pts = align(frames)
        if pts.empty:
            missing.append((NO_MATCH, f"{where}: the sides share no point"))
            continue
        out.append((where, pts))
    return out, missing, None


def side_value(pt: pd.Series, name: str) -> tuple[float, Any]:
    """(value, stderr) of one side at an aligned point."""
    return float(pt[f"value:{name}"]), pt[f"stderr:{name}"]


def tolerance(check: Mapping[str, Any], target: float, se: float) -> float:
    """The largest of the given abs_tol, rel_tol·|target| and n_stderr·se, with n_stderr at least
    :data:`ROUND_OFF` (exact points differ by round-off only).
    """
    tols = [float(check.get("abs_tol", 0.0)), float(check.get("rel_tol", 0.0)) * abs(target)]
    if "n_stderr" in check:
        tols += [float(check["n_stderr"]) * se if math.isfinite(se) else 0.0, ROUND_OFF]
    return max(tols)
