"""The rule of each check kind: the function of the kind's name (vocabulary in
:mod:`rfbench.present.reference`), found by :data:`rfbench.present.report.claims.KINDS`.

Comparing two sides or our numbers: :func:`less_than`, :func:`equals_within`,
:func:`ratio_at_least`; along a parameter: :func:`monotone`, :func:`limit`; ranking values:
:func:`ordering`, :func:`count`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from rfbench.compute.sequential import ALPHA as SEQUENTIAL_ALPHA
from rfbench.present.report.checks import (
    Context,
    Missing,
    Unit,
    aligned,
    compare_le,
    expression,
    fmt_key,
    fmt_num,
    grouped,
    judged,
    passed,
    point_columns,
    point_where,
    resolution,
    sequential_status,
    side_value,
    summarise,
    tolerance,
    worst,
)
from rfbench.present.report.frames import (
    aggregate,
    align,
    groups,
    is_resolved,
    needed,
    plain,
    quadrature,
    split_at,
)
from rfbench.present.report.rows import explain_empty
from rfbench.present.report.verdicts import (
    FAIL,
    NO_MATCH,
    NOISE,
    NOT_RUN,
    PASS,
    UNRESOLVED,
    WEAK,
    Z_REPRODUCED,
    Outcome,
)
from rfbench.present.statistics import holm


def _operand(ctx: Context, pt: pd.Series, side: str, const: str, expr: str) -> tuple[float, Any]:
    if side in ctx.check:
        return side_value(pt, side)
    if const in ctx.check:
        return float(ctx.check[const]), None
    return expression(ctx.check[expr], pt), None


def _two_sided(ctx: Context, rule: Callable[[float, Any, float, Any], tuple[str, str]]) -> Outcome:
    """Apply ``rule(a, sa, b, sb)`` at every aligned point of the lhs/rhs selectors."""
    names = [n for n in ("lhs", "rhs") if n in ctx.check]
    if not names:
        a, _ = _operand(ctx, pd.Series(dtype=object), "lhs", "lhs_value", "")
        b, _ = _operand(ctx, pd.Series(dtype=object), "rhs", "rhs_value", "rhs_expr")
        return summarise([Unit("", *rule(a, None, b, None))], [])
    parts, missing, bad = aligned(ctx, {n: ctx.side(n) for n in names})
    if bad is not None:
        return bad
    units = []
    for group, pts in parts:
        cols = point_columns(pts)
        for _, pt in pts.iterrows():
            a, sa = _operand(ctx, pt, "lhs", "lhs_value", "")
            rhs_const = "rhs_value" if "rhs_value" in ctx.check else "value"
            rhs_expr = "rhs_expr" if "rhs_expr" in ctx.check else "value_expr"
            b, sb = _operand(ctx, pt, "rhs", rhs_const, rhs_expr)
            unit = judged(point_where(group, cols, pt), *rule(a, sa, b, sb), pt, names)
            units.append(_bounded(ctx, unit, b, sb, pt) if unit.status == UNRESOLVED else unit)
    return summarise(units, missing)


def _bounded(ctx: Context, unit: Unit, b: float, sb: Any, pt: pd.Series) -> Unit:
    """An unresolved ``unit`` of ``less_than`` with ``lhs.upper_bound``: an unresolved lhs whose
    declared bound (e.g. 2 for the relative MAE of a nonnegative unbiased estimator:
    E|K̂ − K| ≤ E K̂ + K = 2K) is below a resolved rhs holds; otherwise it stays unresolved.
    """
    c = ctx.check
    bound = c.sides.get("lhs", {}).get("upper_bound") if c.kind == "less_than" else None
    if bound is None or not resolution(pt, ["rhs"])[0]:
        return unit
    status, _ = compare_le(float(bound), b, None, sb, bool(c.get("strict", True)))
    if not passed(status):
        return unit
    return Unit(
        unit.where, status, f"lhs ≤ {fmt_num(bound)} ({c['bound_reason']}) < rhs {fmt_num(b)}"
    )


def less_than(ctx: Context) -> Outcome:
    """lhs < rhs (≤ with ``strict = false``) at every point."""
    strict = bool(ctx.check.get("strict", True))

    def rule(a: float, sa: Any, b: float, sb: Any) -> tuple[str, str]:
        status, z = compare_le(a, b, sa, sb, strict)
        text = f"lhs {fmt_num(a)} vs rhs {fmt_num(b)}"
        return status, text + (
            f" (z = {fmt_num(z)})" if not passed(status) and math.isfinite(z) else ""
        )

    return _two_sided(ctx, rule)


def equals_within(ctx: Context) -> Outcome:
    """lhs equals value / value_expr / rhs, or our numbers the published ones: the difference is
    judged by :func:`equal_within` within the declared tolerance; with ``n_stderr`` the tolerance is
    n se itself (a test that no difference is detectable: pass or fail, no margin).
    """
    c = ctx.check
    if "number" in c or "numbers" in c:
        return _numbers_equal(ctx)

    def rule(a: float, sa: Any, b: float, sb: Any) -> tuple[str, str]:
        se = quadrature(sa, sb)
        tol = tolerance(c, b, se)
        text = f"{fmt_num(a)} vs {fmt_num(b)}: difference {fmt_num(a - b)}"
        text += f" ± {fmt_num(se)}" if math.isfinite(se) else ""
        text += f" (tolerance {fmt_num(tol)})"
        return _equal(c, a - b, se, tol), text

    return _two_sided(ctx, rule)


def equal_within(diff: float, se: float, tol: float) -> str:
    """The claim |d| ≤ tol by :func:`rfbench.present.report.checks.compare_le` (se 0 or unknown:
    exact values, |d| ≤ tol decides).
    """
    known = math.isfinite(se) and se > 0
    status, _ = compare_le(abs(diff), tol * (1 + 1e-12), se if known else 0.0, None, False)
    return status


def _equal(check: Mapping[str, Any], diff: float, se: float, tol: float) -> str:
    """:func:`equal_within`, or with ``n_stderr`` |d| ≤ tol itself (pass or fail, no margin)."""
    if "n_stderr" in check:
        return PASS if abs(diff) <= tol * (1 + 1e-12) else FAIL
    return equal_within(diff, se, tol)


def _numbers_equal(ctx: Context) -> Outcome:
    ids = [ctx.check["number"]] if "number" in ctx.check else list(ctx.check["numbers"])
    units, missing = [], []
    for nid in ids:
        res = ctx.numbers.get(nid)
        if res is None or res.ours is None:
            verdict = res.verdict if res is not None else NOT_RUN
            missing.append((verdict if verdict == NO_MATCH else NOT_RUN, f"{nid}: {verdict}"))
            continue
        target = res.entry.scaled
        se = quadrature(res.stderr)
        tol = tolerance(ctx.check, target, se)
        text = f"ours {fmt_num(res.ours)}"
        text += f" ± {fmt_num(se)}" if math.isfinite(se) and se > 0 else ""
        text += f" vs paper {fmt_num(target)} (tolerance {fmt_num(tol)})"
        units.append(Unit(nid, _equal(ctx.check, res.ours - target, se, tol), text))
    return summarise(units, missing)


def _relative(se: Any, value: float) -> float | None:
    return None if plain(se) is None or value == 0 else float(se) / abs(value)


def ratio_at_least(ctx: Context) -> Outcome:
    """numerator / denominator ≥ at_least (log ratio ≥ at_least_log).

    The check-level ``aggregate`` reduces the ratio (formed point by point), as a number's
    ``derive`` comes before its ``aggregate``: "up to e^10 over σ" is a max of the ratio.
    """
    c = ctx.check
    picks = {n: ctx.side(n, check_aggregate=False) for n in ("numerator", "denominator")}
    parts, missing, bad = aligned(ctx, picks)
    if bad is not None:
        return bad
    units = []
    for group, pts in parts:
        num = pts["value:numerator"].to_numpy(dtype=float)
        den = pts["value:denominator"].to_numpy(dtype=float)
        snum, sden = pts["stderr:numerator"].tolist(), pts["stderr:denominator"].tolist()
        frame = pts.drop(columns=[k for k in pts.columns if ":" in k]).copy()
        frame["resolved"] = pts["resolved:numerator"] & pts["resolved:denominator"]
        frame["n_needed"] = pts[["n_needed:numerator", "n_needed:denominator"]].max(axis=1)
        if c.get("log_values"):  # the metric is a log: log ratio = difference
            frame["value"] = num - den
            se = [quadrature(a, b) for a, b in zip(snum, sden, strict=True)]
        else:  # se of a log ratio = relative errors in quadrature
            frame["value"] = [math.log(a / b) for a, b in zip(num, den, strict=True)]
            se = [
                quadrature(_relative(sa, a), _relative(sb, b))
                for sa, sb, a, b in zip(snum, sden, num, den, strict=True)
            ]
        frame["stderr"], frame["n_trials"] = se, 0
        frame = aggregate(frame, c.get("aggregate"))
        cols = point_columns(frame)
        bound = c["at_least_log"] if "at_least_log" in c else math.log(c["at_least"])
        for _, row in frame.iterrows():
            status, z = compare_le(bound, float(row["value"]), None, row["stderr"], strict=False)
            text = f"log ratio {fmt_num(row['value'])} vs at least {fmt_num(bound)}"
            units.append(judged(point_where(group, cols, row), status, text, row, [""]))
    return summarise(units, missing)


def _curves(
    ctx: Context, along: str
) -> tuple[list[tuple[str, pd.DataFrame]], Missing, Outcome | None]:
    """Per group and curve: the ``select`` rows sorted by ``along``."""
    picked = ctx.side("select")
    if not picked.ok:
        return [], [], Outcome(picked.verdict, picked.detail)
    out, missing = [], []
    for key, frames in grouped({"select": picked.rows}, ctx.for_each):
        rows = frames["select"]
        if along not in rows.columns:
            return [], [], Outcome(NO_MATCH, f"no column {along!r} in the results")
        for sub, g in groups(rows, split_at(rows, along)):
            where = ", ".join(t for t in (fmt_key(key, nulls=True), fmt_key(sub)) if t)
            g = g[g[along].notna()].sort_values(along, kind="stable")
            if g.empty:
                missing.append((NOT_RUN, f"{where}: no value of {along}"))
            else:
                out.append((where, g))
    return out, missing, None


def monotone(ctx: Context) -> Outcome:
    """The ``select``-ed rows increase / decrease along ``along`` (``strict``: strictly)."""
    c = ctx.check
    along, strict = c["along"], bool(c.get("strict", False))
    curves, missing, bad = _curves(ctx, along)
    if bad is not None:
        return bad
    units = []
    for where, g in curves:
        if g[along].nunique() < 2:
            missing.append((NOT_RUN, f"{where}: one value of {along} only"))
            continue
        vals, ses, pos = g["value"].to_numpy(float), g["stderr"].tolist(), g[along].tolist()
        ok = is_resolved(g)
        status, text, steps = PASS, "", 0
        for i in range(len(vals) - 1):
            if not (ok[i] and ok[i + 1]):  # a step on an unresolved sample decides nothing
                continue
            steps += 1
            a, b, sa, sb = vals[i], vals[i + 1], ses[i], ses[i + 1]
            if c["direction"] == "decreasing":
                a, b, sa, sb = b, a, sb, sa
            s, _ = compare_le(a, b, sa, sb, strict)
            if not passed(s) and not text:
                text = f"{along} {fmt_num(pos[i])} → {fmt_num(pos[i + 1])}: "
                text += f"{fmt_num(vals[i])} → {fmt_num(vals[i + 1])}"
            status = worst(status, s)
        if not steps:  # the sample size that would resolve the unresolved points, if known
            units.append(Unit(where, UNRESOLVED, f"{len(vals)} points", needed(g[~ok])))
            continue
        units.append(Unit(where, status, text or f"{len(vals)} points"))
    return summarise(units, missing)


def limit(ctx: Context) -> Outcome:
    """The value at the ``toward`` end of ``along`` equals ``value`` / ``value_expr`` within the
    declared tolerance, by the equality rule of
    :func:`equal_within`."""
    c = ctx.check
    curves, missing, bad = _curves(ctx, c["along"])
    if bad is not None:
        return bad
    units = []
    for where, g in curves:
        row = g.iloc[-1] if c["toward"] == "max" else g.iloc[0]
        target = float(c["value"]) if "value" in c else expression(c["value_expr"], row)
        tol = tolerance(c, target, math.nan)
        v = float(row["value"])
        se = float(plain(row.get("stderr")) or 0.0)
        text = f"{fmt_num(v)} at {c['along']} = {fmt_num(row[c['along']])} vs {fmt_num(target)}"
        units.append(judged(where, equal_within(v - target, se, tol), text, row, [""]))
    return summarise(units, missing)


def ordering(ctx: Context) -> Outcome:
    """``order`` from smallest to largest metric (``strict``: <) in every group and point; with
    ``min_gap`` δ (a declared effect size) a link is the claim a + δ ≤ b.
    """
    by, order = ctx.check.get("by", "estimator"), list(ctx.check["order"])
    strict = bool(ctx.check.get("strict", False))
    gap = float(ctx.check.get("min_gap", 0.0))
    picks = {v: ctx.side(None, {by: v}) for v in order}
    parts, missing, bad = aligned(ctx, picks)
    if bad is not None:
        return bad
    units = []
    metric = ctx.check["metric"]
    for group, pts in parts:
        cols = point_columns(pts)
        for _, pt in pts.iterrows():
            where = point_where(group, cols, pt)
            links = []
            for lo, hi in zip(order, order[1:], strict=False):
                (a, sa), (b, sb) = side_value(pt, lo), side_value(pt, hi)
                s, z = compare_le(a + gap, b, sa, sb, strict)
                text = f"{lo} {fmt_num(a)} {'<' if strict else '≤'} {hi} {fmt_num(b)}"
                if gap:
                    se = quadrature(sa, sb)
                    text = (
                        f"{hi} − {lo} = {fmt_num(b - a)} ± {fmt_num(se)} vs the declared effect "
                        f"size {fmt_num(gap)}"
                    )
                elif not passed(s):
                    text = f"{lo} {fmt_num(a)} {'≥' if strict else '>'} {hi} {fmt_num(b)}"
                    text += f" (z = {fmt_num(z)})" if math.isfinite(z) else ""
                links.append(judged(where, s, text, pt, [lo, hi], small=lo, metric=metric))
            units.append(_chain(where, links))
    return summarise(units, missing)


def _chain(where: str, links: list[Unit]) -> Unit:
    """An ordering's point from its links: any decided failing link fails it (resolved or
    not, the other links cannot undo it); else any unresolved link leaves it unresolved."""
    for status in (FAIL, NOISE, UNRESOLVED, WEAK):
        bad = [u for u in links if u.status == status]
        if bad:
            need = max((u.needed for u in bad), default=math.nan)
            shown = bad if status != WEAK else bad[:1]
            return Unit(where, status, "; ".join(u.detail for u in shown), need)
    return Unit(where, PASS, "")


def _panel_ranges(ctx: Context, rows: pd.DataFrame) -> dict[tuple[Any, ...], float]:
    """Panel (values of ``panel``) → range of the metric over its rows (the plotted axis)."""
    panel = list(ctx.check.get("panel", []))
    out = {}
    for key, g in groups(rows, panel):
        vals = g["value"].to_numpy(dtype=float)
        vals = vals[np.isfinite(vals)]
        out[tuple(key.values())] = float(vals.max() - vals.min()) if len(vals) else 0.0
    return out


#: The two-sided level at which a comparison of fixed draws fails (|z| > Z_REPRODUCED).
FIXED_ALPHA = 2.0 * float(norm.sf(Z_REPRODUCED))


def holm_failures(found: list[tuple]) -> list[tuple]:
    """A claim's comparisons ``(where, status, text, pt, other, small, level)`` with each failure
    that does not survive Holm's procedure over all of them (Holm 1979) read as within noise.

    ``level`` is the comparison's p-value over the level at which it fails alone (``p/α``: a
    fixed comparison's two-sided normal p over :data:`FIXED_ALPHA`, a sequential one's anytime
    p-value over the confidence sequence's α), so a failure alone is ``level < 1`` and Holm
    rejects the k-th smallest when ``level < 1/(n − k + 1)``. Sequential p-values test a
    difference of 0, which is the failure's bound when the check's tolerance is 0.
    """
    if not found:
        return []
    levels = np.array([row[-1] if row[1] == FAIL else np.inf for row in found])
    kept = holm(levels, 1.0)
    out = []
    for (where, status, text, pt, other, small, _), ok in zip(found, kept, strict=True):
        if status == FAIL and not ok:
            status = NOISE
            text += f" (not significant after Holm over the claim's {len(found)} comparisons)"
        out.append((where, status, text, pt, other, small))
    return out


def count(ctx: Context) -> Outcome:
    """Is ``estimator`` the best (``best`` min | max) value of ``by`` in enough groups? Ties within
    ``abs_tol`` or, with ``range_tol``, that fraction of the metric's range over the group's
    ``panel`` (the plotted axis) count as best. A comparison going the wrong way fails only when
    it survives Holm's procedure over all the claim's comparisons (:func:`holm_failures`);
    otherwise it is within noise.
    """
    c = ctx.check
    by, est, tol = c.get("by", "estimator"), str(c["estimator"]), float(c.get("abs_tol", 0.0))
    picked = ctx.side(None)
    if not picked.ok:
        return Outcome(picked.verdict, picked.detail)
    if not (picked.rows[by].astype(object) == est).any():
        return Outcome(*explain_empty(picked.rows, {by: est}))
    panel = list(c.get("panel", []))
    ranges = _panel_ranges(ctx, picked.rows) if "range_tol" in c else {}
    found, missing = [], []
    for key, frames in grouped({"all": picked.rows}, ctx.for_each):
        where = fmt_key(key, nulls=True)
        comp = {str(k[by]): g for k, g in groups(frames["all"], [by])}
        if est not in comp or len(comp) < 2:
            why = "no competitor" if est in comp else f"no {est} rows"
            missing.append((NOT_RUN, f"{where}: {why}"))
            continue
        g_tol = tol
        if ranges:
            g_tol = max(tol, float(c["range_tol"]) * ranges[tuple(key[p] for p in panel)])
        pts = align({est: comp.pop(est), **comp})
        cols = point_columns(pts)
        for _, pt in pts.iterrows():
            v, sv = side_value(pt, est)
            vals = {o: side_value(pt, o) for o in comp}
            pick = min if c["best"] == "min" else max
            other = pick(vals, key=lambda o: vals[o][0])
            o, so = vals[other]
            status = sequential_status(pt, est, other, g_tol, c["best"])
            if status is not None:
                level = float(pt[f"p_anytime:{other}"]) / SEQUENTIAL_ALPHA
            else:
                low, high = (
                    ((v - g_tol, sv), (o, so)) if c["best"] == "min" else ((o, so), (v + g_tol, sv))
                )
                status, z = compare_le(low[0], high[0], low[1], high[1], strict=False)
                level = 2.0 * float(norm.sf(z)) / FIXED_ALPHA
            text = f"{est} {fmt_num(v)} vs {other} {fmt_num(o)}"
            if ranges and not passed(status):
                text += f" (on par within {fmt_num(g_tol)})"
            small = est if c["best"] == "min" else other
            found.append((point_where(where, cols, pt), status, text, pt, other, small, level))
    units = [
        judged(w, status, text, pt, [est, other], small, c["metric"])
        for w, status, text, pt, other, small in holm_failures(found)
    ]
    return summarise(units, missing, float(c["at_least_fraction"]))
