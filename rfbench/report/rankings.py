"""Check kinds that rank values: ``ordering`` and ``count`` (see :mod:`rfbench.reference`).

Each takes a :class:`rfbench.report.checks.Context` and returns an
:class:`~rfbench.report.verdicts.Outcome`.
"""

from __future__ import annotations

import math

from rfbench.report.checks import (
    Context,
    Unit,
    aligned,
    compare_le,
    fmt_key,
    fmt_num,
    grouped,
    point_columns,
    point_where,
    side_value,
    summarise,
    worst,
)
from rfbench.report.frames import align, groups
from rfbench.report.rows import explain_empty
from rfbench.report.verdicts import NOT_RUN, PASS, Outcome


def ordering(ctx: Context) -> Outcome:
    """``order`` from smallest to largest metric (``strict``: <), in every group and point."""
    by, order = ctx.check.get("by", "estimator"), list(ctx.check["order"])
    strict = bool(ctx.check.get("strict", False))
    picks = {v: ctx.side(None, {by: v}) for v in order}
    parts, missing, bad = aligned(ctx, picks)
    if bad is not None:
        return bad
    units = []
    for group, pts in parts:
        cols = point_columns(pts)
        for _, pt in pts.iterrows():
            status, text = PASS, ""
            for lo, hi in zip(order, order[1:], strict=False):
                (a, sa), (b, sb) = side_value(pt, lo), side_value(pt, hi)
                s, z = compare_le(a, b, sa, sb, strict)
                if s != PASS and not text:
                    text = f"{lo} {fmt_num(a)} {'≥' if strict else '>'} {hi} {fmt_num(b)}"
                    text += f" (z = {fmt_num(z)})" if math.isfinite(z) else ""
                status = worst(status, s)
            units.append(Unit(point_where(group, cols, pt), status, text))
    return summarise(units, missing)


def count(ctx: Context) -> Outcome:
    """Is ``estimator`` the best (``best`` min | max) value of ``by`` in enough groups?"""
    c = ctx.check
    by, est, tol = c.get("by", "estimator"), str(c["estimator"]), float(c.get("abs_tol", 0.0))
    picked = ctx.side(None)
    if not picked.ok:
        return Outcome(picked.verdict, picked.detail)
    if not (picked.rows[by].astype(object) == est).any():
        return Outcome(*explain_empty(picked.rows, {by: est}))
    units, missing = [], []
    for key, frames in grouped({"all": picked.rows}, ctx.for_each):
        where = fmt_key(key, nulls=True)
        comp = {str(k[by]): g for k, g in groups(frames["all"], [by])}
        if est not in comp or len(comp) < 2:
            why = "no competitor" if est in comp else f"no {est} rows"
            missing.append((NOT_RUN, f"{where}: {why}"))
            continue
        pts = align({est: comp.pop(est), **comp})
        cols = point_columns(pts)
        for _, pt in pts.iterrows():
            v, sv = side_value(pt, est)
            vals = {o: side_value(pt, o) for o in comp}
            pick = min if c["best"] == "min" else max
            other = pick(vals, key=lambda o: vals[o][0])
            o, so = vals[other]
            if c["best"] == "min":
                status, _ = compare_le(v - tol, o, sv, so, strict=False)
            else:
                status, _ = compare_le(o, v + tol, so, sv, strict=False)
            text = f"{est} {fmt_num(v)} vs {other} {fmt_num(o)}"
            units.append(Unit(point_where(where, cols, pt), status, text))
    return summarise(units, missing, float(c["at_least_fraction"]))
