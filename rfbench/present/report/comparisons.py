"""Check kinds comparing two sides or our numbers: ``less_than``, ``equals_within``,
``ratio_at_least`` (vocabulary in :mod:`rfbench.present.reference`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from rfbench.present.report.checks import (
    Context,
    Unit,
    aligned,
    compare_le,
    expression,
    fmt_num,
    judged,
    passed,
    point_columns,
    point_where,
    resolution,
    side_value,
    summarise,
    tolerance,
)
from rfbench.present.report.frames import aggregate, plain, quadrature
from rfbench.present.report.verdicts import (
    FAIL,
    NO_MATCH,
    NOT_RUN,
    PASS,
    UNRESOLVED,
    Outcome,
)


def _operand(ctx: Context, pt: pd.Series, side: str, const: str, expr: str) -> tuple[float, Any]:
    if side in ctx.check:
        return side_value(pt, side)
    if const in ctx.check:
        return float(ctx.check[const]), None
    return expression(ctx.check[expr], pt), None


def _two_sided(ctx: Context, rule: Callable[[float, Any, float, Any], tuple[str, str]]) -> Outcome:
    """Apply ``rule(a, sa, b, sb)`` at every aligned point of the lhs/rhs selectors."""
    names = [n for n in ("lhs", "rhs") if n in ctx.check]
    bounds = _bounded(ctx)
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
            where = point_where(group, cols, pt)
            unit = judged(where, *rule(a, sa, b, sb), pt, names)
            if unit.status == UNRESOLVED and bounds is not None:
                unit = bounds(where, unit, b, sb, pt)
            units.append(unit)
    return summarise(units, missing)


def _bounded(ctx: Context) -> Callable[[str, Unit, float, Any, pd.Series], Unit] | None:
    """For ``less_than`` with ``lhs.upper_bound``: an unresolved lhs whose declared bound (e.g. 2
    for the relative MAE of a nonnegative unbiased estimator: E|K̂ − K| ≤ E K̂ + K = 2K) is below a
    resolved rhs holds; otherwise the comparison stays unresolved.
    """
    bound = (
        ctx.check.sides.get("lhs", {}).get("upper_bound") if ctx.check.kind == "less_than" else None
    )
    if bound is None:
        return None
    strict = bool(ctx.check.get("strict", True))

    def decide(where: str, unit: Unit, b: float, sb: Any, pt: pd.Series) -> Unit:
        if not resolution(pt, ["rhs"])[0]:
            return unit
        status, _ = compare_le(float(bound), b, None, sb, strict)
        if not passed(status):
            return unit
        why = ctx.check["bound_reason"]
        text = f"lhs ≤ {fmt_num(bound)} ({why}) < rhs {fmt_num(b)}"
        return Unit(where, status, text)

    return decide


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
