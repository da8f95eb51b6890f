"""Check kinds that rank values: ``ordering`` and ``count`` (see
:mod:`rfbench.present.reference`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from rfbench.present.report.checks import (
    Context,
    Unit,
    aligned,
    compare_le,
    fmt_key,
    fmt_num,
    grouped,
    judged,
    passed,
    point_columns,
    point_where,
    sequential_status,
    side_value,
    summarise,
)
from rfbench.present.report.frames import align, groups, quadrature
from rfbench.present.report.rows import explain_empty
from rfbench.present.report.verdicts import FAIL, NOISE, NOT_RUN, PASS, UNRESOLVED, WEAK, Outcome


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


def count(ctx: Context) -> Outcome:
    """Is ``estimator`` the best (``best`` min | max) value of ``by`` in enough groups? Ties within
    ``abs_tol`` or, with ``range_tol``, that fraction of the metric's range over the group's
    ``panel`` (the plotted axis) count as best.
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
    units, missing = [], []
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
            if status is None and c["best"] == "min":
                status, _ = compare_le(v - g_tol, o, sv, so, strict=False)
            elif status is None:
                status, _ = compare_le(o, v + g_tol, so, sv, strict=False)
            text = f"{est} {fmt_num(v)} vs {other} {fmt_num(o)}"
            if ranges and not passed(status):
                text += f" (on par within {fmt_num(g_tol)})"
            small = est if c["best"] == "min" else other
            unit = judged(
                point_where(where, cols, pt), status, text, pt, [est, other], small, c["metric"]
            )
            units.append(unit)
    return summarise(units, missing, float(c["at_least_fraction"]))
