"""Readings of a paper's sentence: an entry with ``reading_of`` is shown in its primary's row
(:func:`beside_primary`); a claim whose readings disagree on whether it holds *depends on the
reading* (:func:`depends_on_reading`).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import TypeVar

from rfbench.present import reference
from rfbench.present.report.verdicts import (
    CONSISTENT,
    DEPENDS,
    DOES_NOT_HOLD,
    HOLDS,
    ORDERING_CONFIRMED,
    VERIFIED,
    ClaimResult,
    NumberResult,
    likely_reason,
)

R = TypeVar("R", NumberResult, ClaimResult)


def beside_primary(results: list[R]) -> list[R]:
    """One verdict per paper sentence: entries with ``reading_of`` (another reading of the
    sentence) are dropped from the list, and their verdict is shown in the primary's detail."""
    others = _other_readings(results)
    out = []
    for r in results:
        if r.entry.reading_of:
            continue
        alts = others.get(r.entry.id, [])
        if alts:
            shown = "; ".join(_alt(a) for a in alts)
            detail = "; ".join(t for t in (r.detail, f"other reading — {shown}") if t)
            r = replace(r, detail=detail)
        out.append(r)
    return out


def _other_readings(results: list[R]) -> dict[str, list[R]]:
    """Primary id → the results of its other readings."""
    others: dict[str, list[R]] = {}
    for r in results:
        if r.entry.reading_of:
            others.setdefault(r.entry.reading_of, []).append(r)
    return others


def _alt(r: NumberResult | ClaimResult) -> str:
    z = getattr(r, "z", None)
    ztext = f", z = {z:+.2f}" if z is not None and math.isfinite(z) else ""
    ours = getattr(r, "ours", None)
    otext = f" (ours {ours / r.entry.scale:.4g}{ztext})" if ours is not None else ""
    if isinstance(r, ClaimResult) and r.verdict not in HELD:  # where this reading fails
        parts = r.detail.split("; ")
        heads = [i for i, p in enumerate(parts) if _COUNTED.match(p)]
        first = parts[heads[0] + 1] if heads and heads[0] + 1 < len(parts) else ""
        otext = f" ({first})" if first and not first.startswith("other reading") else ""
    return f"{r.entry.reading}: {r.verdict}{otext}"


#: The head of a claim's detail ("k of n comparisons hold"): the first failure follows it.
_COUNTED = re.compile(r"^(\d+ of \d+ comparisons hold|all \d+ comparisons rest)")
#: Claim verdicts under which a reading does not contradict the claim, and the one under which it
#: does: readings on both sides make the verdict *depends on the reading*.
HELD = frozenset({VERIFIED, HOLDS, ORDERING_CONFIRMED, CONSISTENT})


def depends_on_reading(
    shown: list[ClaimResult], every: list[ClaimResult], errata: list[reference.ErratumEntry]
) -> list[ClaimResult]:
    """A claim whose readings disagree on whether it holds gets *depends on the reading*, with the
    measured reason of the difference; a *weaker* reading (one that asks less than the sentence
    says) is shown but does not decide.
    """
    alts = _other_readings(every)
    out = []
    for r in shown:
        others = alts.get(r.entry.id, [])
        deciding = [a for a in others if not getattr(a.entry, "weaker", False)]
        verdicts = {r.verdict, *(a.verdict for a in deciding)}
        own = r.entry.reading or "the primary reading"
        readings = ((own, r.verdict), *((a.entry.reading, a.verdict) for a in others))
        if others:
            r = replace(r, readings=readings)
        if verdicts & HELD and DOES_NOT_HOLD in verdicts:
            why = likely_reason(r.entry, errata)
            head = f"{own}: {r.verdict}"
            r = replace(r, verdict=DEPENDS, detail="; ".join(t for t in (why, head, r.detail) if t))
        out.append(r)
    return out
