"""Check kinds along a parameter: ``monotone`` and ``limit`` (vocabulary in
:mod:`rfbench.present.reference`)."""

from __future__ import annotations

import math

import pandas as pd

from rfbench.present.report.checks import (
    Context,
    Missing,
    Unit,
    compare_le,
    expression,
    fmt_key,
    fmt_num,
    grouped,
    judged,
    passed,
    summarise,
    tolerance,
    worst,
)
from rfbench.present.report.comparisons import equal_within
from rfbench.present.report.frames import groups, is_resolved, plain, split_at
from rfbench.present.report.verdicts import NO_MATCH, NOT_RUN, PASS, UNRESOLVED, Outcome


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
        need = g["n_needed"].tolist() if "n_needed" in g else [math.nan] * len(g)
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
        if not steps:
            unknown = [float(n) for n, r in zip(need, ok, strict=True) if not r]
            known = [n for n in unknown if math.isfinite(n)]
            units.append(
                Unit(where, UNRESOLVED, f"{len(vals)} points", max(known) if known else math.nan)
            )
            continue
        units.append(Unit(where, status, text or f"{len(vals)} points"))
    return summarise(units, missing)


def limit(ctx: Context) -> Outcome:
    """The value at the ``toward`` end of ``along`` equals ``value`` / ``value_expr`` within the
    declared tolerance, by the equality rule of
    :func:`rfbench.present.report.comparisons.equal_within`."""
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
