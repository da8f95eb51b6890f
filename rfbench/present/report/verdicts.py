"""The report's verdicts: their names, the result records (:class:`NumberResult`,
:class:`ClaimResult`) and the rules that assign them (:func:`number_verdict`,
:func:`claim_verdict`); readings of a paper's sentence: an entry with ``reading_of`` is shown in
its primary's row (:func:`beside_primary`), and a claim whose readings disagree on whether it holds
*depends on the reading* (:func:`depends_on_reading`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import TypeVar

from rfbench.compute.text import first_sentence
from rfbench.present.reference import ClaimEntry, ErratumEntry, NumberEntry, reason_of

REPRODUCED = "reproduced"
#: Equal to the paper's value by replaying its released random stream (not a reproduction).
REPLAYED = "replayed"
#: A claim that holds on closed forms / exact computations only (no sampled row).
VERIFIED = "verified analytically"
WITHIN_NOISE = "within noise"
DIFFERS = "differs"
NOT_RUN = "not run"
NO_MATCH = "no match"
NOT_REPRODUCIBLE = "not reproducible here"
#: The value hinges on a setting the paper does not state: shown with the plausible range.
NOT_COMPARABLE = "not comparable"
HOLDS = "holds"
ORDERING_CONFIRMED = "ordering confirmed"
#: Every comparison goes the claimed way, but not every one by 2 standard errors.
CONSISTENT = "consistent"
DOES_NOT_HOLD = "does not hold"
UNTESTABLE = "untestable at this sample size"
MANUAL = "manual"
#: The paper's sentence has several readings and they give different verdicts (each is shown).
DEPENDS = "depends on the reading"

NUMBER_VERDICTS = (
    REPLAYED,
    REPRODUCED,
    WITHIN_NOISE,
    DIFFERS,
    NOT_COMPARABLE,
    NOT_RUN,
    NO_MATCH,
    NOT_REPRODUCIBLE,
)
CLAIM_VERDICTS = (
    VERIFIED,
    HOLDS,
    ORDERING_CONFIRMED,
    CONSISTENT,
    WITHIN_NOISE,
    DEPENDS,
    DOES_NOT_HOLD,
    UNTESTABLE,
    MANUAL,
    NOT_RUN,
    NO_MATCH,
    NOT_REPRODUCIBLE,
)
#: |z| thresholds: reproduced up to Z_REPRODUCED; a number with a standard error differs when
#: Holm's procedure over all such numbers rejects it (:data:`ALPHA`), one without (a tolerance)
#: beyond Z_NOISE; in between it is within noise.
Z_REPRODUCED = 2.0
Z_NOISE = 3.0
#: Family-wise error rate of the numbers compared with a standard error (Holm's procedure).
ALPHA = 0.05
#: Two-sided normal quantile of the confidence intervals printed for ours − paper (95 %).
Z_CI = 1.959963984540054
#: Relative tolerance when neither our value nor the paper's has a standard error: the combined
#: standard error is taken as REL_TOL/2 · |paper|, so "reproduced" means within REL_TOL.
REL_TOL = 0.05
#: Marker a row's detail carries for a measured reason until report.build.resolve fills it in.
MARK = "⟨reason:{}⟩"
#: Check kinds whose success is reported as "ordering confirmed" rather than "holds".
ORDER_KINDS = frozenset({"ordering", "count", "monotone", "less_than"})

# Outcomes of a check, before they become verdicts (UNRESOLVED: every comparison rests on a
# sample that does not resolve its statistic).
PASS, FAIL, NOISE, UNRESOLVED = "pass", "fail", "noise", "unresolved"
#: A pass that is not significant: the claimed side is ahead by less than 2 standard errors.
WEAK = "weak"


@dataclass(frozen=True)
class Outcome:
    """What a check found: ``status`` (pass | fail | noise | not run | no match) and why."""

    status: str
    detail: str = ""


@dataclass(frozen=True)
class NumberResult:
    """One published number next to ours (both in our metric's units)."""

    entry: NumberEntry
    verdict: str
    ours: float | None = None
    stderr: float | None = None
    z: float | None = None
    tolerance_based: bool = False
    ours_std: float | None = None
    detail: str = ""
    #: ours − paper on the compared scale (printed units, or the ratio of ``ratio_to``) and its
    #: combined standard error (ours, the paper's ±, the printed rounding)
    diff: float | None = None
    diff_se: float | None = None

    @property
    def sampled(self) -> bool:
        """Is our value a sample mean (it has a positive standard error), not a computation?"""
        return self.stderr is not None and math.isfinite(self.stderr) and self.stderr > 0

    @property
    def in_family(self) -> bool:
        """Is this number one of the family Holm's procedure corrects over: a sampled value
        compared by z with a standard error (not replayed, not "not comparable")?"""
        return (
            self.sampled
            and self.z is not None
            and math.isfinite(self.z)
            and not self.tolerance_based
            and self.verdict not in (REPLAYED, NOT_COMPARABLE)
        )


@dataclass(frozen=True)
class ClaimResult:
    """One claim, its verdict, why, and a warning when the verdict contradicts ``expect``."""

    entry: ClaimEntry
    verdict: str
    detail: str = ""
    surprise: str = ""
    #: (reading, verdict) of every reading of the sentence, the primary first, when it has several
    readings: tuple[tuple[str, str], ...] = ()


def combined_z(
    ours: float,
    paper: float,
    ours_se: float | None,
    paper_se: float | None,
    rounding_sd: float = 0.0,
) -> tuple[float, bool, float]:
    """(z, tolerance_based, se): ours − paper over the combined standard error, the printed rounding
    ``rounding_sd`` included (:data:`REL_TOL` without any standard error).
    """
    known = [s for s in (ours_se, paper_se) if s is not None and math.isfinite(s)]
    tolerance_based = not known
    stat = REL_TOL / 2 * abs(paper) if tolerance_based else math.sqrt(sum(s * s for s in known))
    se = math.sqrt(stat**2 + rounding_sd**2)
    diff = ours - paper
    if se == 0.0:
        return (0.0 if diff == 0.0 else math.copysign(math.inf, diff)), tolerance_based, se
    return diff / se, tolerance_based, se


def number_verdict(
    z: float, printed_equal: bool, replayed: bool = False, cutoff: float = Z_NOISE
) -> str:
    """Reproduced (|z| ≤ 2 or the printed digits; "replayed" for a ``replayed`` number), differs
    (|z| > 3 and ≥ ``cutoff``, Holm's family-wise |z|), else within noise.
    """
    if printed_equal or abs(z) <= Z_REPRODUCED:
        return REPLAYED if replayed else REPRODUCED
    return DIFFERS if abs(z) > Z_NOISE and abs(z) >= cutoff else WITHIN_NOISE


def likely_reason(entry: NumberEntry | ClaimEntry, errata: list[ErratumEntry]) -> str:
    """Why a result differs, in one line: the measured reason (``[[reason]]`` tables) with the
    reading it depends on, else the spec's note on the entry (an ambiguity) or the entry's note;
    and the errata of its figure (typos in the paper)."""
    parts = []
    measured = reason_of(entry.id)
    if measured is not None:  # filled in from the results by rfbench.present.report.build
        parts.append(f"measured: {MARK.format(measured.key)}")
        if measured.reading:
            parts.append("reading-dependent (see the reason)")
    elif entry.spec_note:
        note = first_sentence(entry.spec_note, clause=True, limit=160)
        parts.append(f"documented ambiguity: {note}")
    elif entry.note:
        parts.append(f"note: {first_sentence(entry.note, clause=True, limit=160)}")
    related = [e.id for e in errata if entry.figure and e.figure == entry.figure]
    if related:
        parts.append(f"errata of {entry.figure}: {', '.join(related)}")
    return "; ".join(parts)


def claim_verdict(
    entry: ClaimEntry, outcome: Outcome, reason: str = "", analytic: bool = False
) -> ClaimResult:
    """The verdict of a claim from its check's outcome (``analytic``: closed forms or exact values
    only), with ``reason`` when it does not hold and a contradicted ``expect`` flagged.
    """
    kind = entry.check.kind
    verdict = {
        PASS: ORDERING_CONFIRMED if kind in ORDER_KINDS else HOLDS,
        WEAK: CONSISTENT,
        FAIL: DOES_NOT_HOLD,
        NOISE: WITHIN_NOISE,
        UNRESOLVED: UNTESTABLE,
    }.get(outcome.status, outcome.status)
    if analytic and outcome.status == PASS:
        verdict = VERIFIED
    surprise = ""
    if entry.expect == "pass" and verdict == DOES_NOT_HOLD:
        surprise = "expected to hold"
    elif entry.expect == "fail" and verdict in (HOLDS, ORDERING_CONFIRMED, VERIFIED, CONSISTENT):
        surprise = "expected to fail (the spec found the claim false)"
    parts = [outcome.detail]
    if verdict == DOES_NOT_HOLD:
        parts.insert(0, reason)
        if entry.expect == "fail":
            parts.insert(0, "as the spec predicts")
    return ClaimResult(entry, verdict, "; ".join(p for p in parts if p), surprise)


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
    shown: list[ClaimResult], every: list[ClaimResult], errata: list[ErratumEntry]
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
