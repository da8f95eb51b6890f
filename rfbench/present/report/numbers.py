"""Published numbers next to ours: the single row the entry's ``match`` leaves, compared in our
metric's units by z = (ours − paper) / √(se_ours² + se_paper² + rounding²) (the report's "How to
read this report").
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from functools import cache
from statistics import NormalDist

import numpy as np

from rfbench.present.reference import HERE, ErratumEntry, NumberEntry, get
from rfbench.present.report.frames import NON_KEYS, plain, varying
from rfbench.present.report.rows import ResultSet, fmt_selector, pick
from rfbench.present.report.verdicts import (
    ALPHA,
    DIFFERS,
    NO_MATCH,
    NOT_COMPARABLE,
    NOT_REPRODUCIBLE,
    NOT_RUN,
    WITHIN_NOISE,
    Z_NOISE,
    NumberResult,
    combined_z,
    likely_reason,
    number_verdict,
)
from rfbench.present.statistics import holm

_VALUE = re.compile(r"\bvalue\s*=\s*([-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?)")


@cache
def _toml_text(paper: str) -> str:
    return (HERE / f"{paper}.toml").read_text(encoding="utf-8")


def printed_literal(entry: NumberEntry) -> str:
    """The value as written in the reference file (keeps trailing zeros: ``"0.70"``)."""
    text = _toml_text(entry.paper)
    start = text.find(f'id = "{entry.id}"')
    if start >= 0:  # the value on the entry's line
        end = text.find("\n", start)
        found = _VALUE.search(text, text.rfind("\n", 0, start) + 1, end if end >= 0 else len(text))
        if found:
            return found.group(1).replace("_", "")
    return repr(entry.value)


def printed_unit(entry: NumberEntry) -> float:
    """One unit of the last printed digit, in printed units (``0.70`` → 0.01)."""
    try:
        exponent = Decimal(printed_literal(entry)).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    return float(Decimal(1).scaleb(exponent)) if isinstance(exponent, int) else 0.0


def _paper_se(entry: NumberEntry) -> float | None:
    printed = entry.stderr if entry.stderr is not None else entry.std
    return None if printed is None else abs(printed * entry.scale)


def _single(result: ResultSet, entry: NumberEntry, metric: str | None = None):
    """(value, stderr, verdict, detail) of the entry's row (with ``metric`` instead, if given)."""
    match = dict(entry.match)
    rows = result.experiment(match["experiment"], entry.figure)
    if rows.empty:
        where = f"{match['experiment']}/{entry.figure}.parquet"
        return None, None, NOT_RUN, f"no results for {entry.figure} ({where})"
    if metric is not None:
        match["metric"] = metric
    picked = pick(rows, match)
    if not picked.ok:
        return None, None, picked.verdict, picked.detail
    found = picked.rows
    if len(found) > 1:
        cols = [c for c in varying(found) if c not in NON_KEYS]
        return None, None, NO_MATCH, f"ambiguous: {len(found)} rows differ in {', '.join(cols)}"
    row = found.iloc[0]
    value = plain(row["value"])
    if value is None or not math.isfinite(value):
        note = plain(row.get("note")) if "note" in row.index else None
        return None, None, NOT_RUN, f"our value is {value}" + (f" ({note})" if note else "")
    return float(value), plain(row["stderr"]), "", ""


def evaluate_number(
    entry: NumberEntry, result: ResultSet, errata: list[ErratumEntry]
) -> NumberResult:
    """Our value of a published number and its verdict."""
    if not entry.reproducible:
        return NumberResult(entry, NOT_REPRODUCIBLE, detail=entry.reason)
    ours, se, verdict, detail = _single(result, entry)
    if ours is None:
        if verdict == NO_MATCH:
            match = {k: v for k, v in entry.match.items() if k != "std_metric"}
            detail = f"{detail} [match: {fmt_selector({**match, 'figure': entry.figure})}]"
        return NumberResult(entry, verdict, detail=detail)
    std_metric = entry.match.get("std_metric")
    ours_std = _single(result, entry, std_metric)[0] if std_metric else None
    unit = printed_unit(entry)
    rounding = unit * abs(entry.scale) / math.sqrt(12.0)
    z, tolerance_based, diff_se = combined_z(ours, entry.scaled, se, _paper_se(entry), rounding)
    diff = (ours - entry.scaled) / abs(entry.scale)
    diff_se /= abs(entry.scale)
    printed_equal = abs(ours / entry.scale - entry.value) <= unit / 2 * (1 + 1e-9) + 1e-15
    scale_note = ""
    if entry.ratio_to:
        z, printed_equal, scale_note, diff, diff_se = _ratio_scale(entry, result, ours, se)
    verdict = number_verdict(z, printed_equal, entry.evidence == "replayed")
    reason = likely_reason(entry, errata) if verdict == DIFFERS else ""
    if entry.unstated:
        verdict, reason = NOT_COMPARABLE, _not_comparable(entry, ours)
    detail = "; ".join(t for t in (scale_note, reason, _detectable(entry, se)) if t)
    return NumberResult(
        entry, verdict, ours, se, z, tolerance_based, ours_std, detail, diff, diff_se
    )


def _family_z(results: Sequence[NumberResult], seconds: bool = False) -> np.ndarray:
    """|z| of the sampled numbers compared with a standard error (one per printed number), and
    with ``seconds`` also of the second comparisons (the replays of released code)."""
    return np.array(
        [
            abs(r.z)  # type: ignore[arg-type]
            for r in results
            if r.in_family and not r.entry.reading_of and (seconds or not r.entry.second_of)
        ]
    )


def _holm_cutoff(zs: np.ndarray, alpha: float) -> float:
    """The smallest two-sided |z| Holm's procedure rejects among ``zs`` (∞ if none)."""
    normal = NormalDist()
    p = np.array([2 * (1 - normal.cdf(z)) for z in zs])
    hit = holm(p, alpha)
    return float(zs[hit].min()) if hit.any() else math.inf


def family_wise(results: Sequence[NumberResult], alpha: float = ALPHA) -> tuple[int, float, float]:
    """(N, Bonferroni |z| threshold, Holm's |z| cutoff: the smallest |z| it rejects, ∞ if none) over
    the sampled numbers compared with a standard error (:attr:`NumberResult.in_family`, one
    comparison per printed number).
    """
    zs = _family_z(results)
    n = len(zs)
    if not n:
        return 0, math.inf, math.inf
    return n, NormalDist().inv_cdf(1 - alpha / (2 * n)), _holm_cutoff(zs, alpha)


#: a rejected number whose |z| is within this factor of its Holm step's critical value sits at
#: the threshold: its row says so
AT_THRESHOLD = 1.05


def holm_margin(results: Sequence[NumberResult], z: float, alpha: float = ALPHA) -> str:
    """For a number Holm's procedure rejects with |``z``|: its rank among the family's |z|
    (descending), the critical |z| of that step, Φ⁻¹(1 − α/(2(n − rank + 1))), and whether the
    rejection survives a family enlarged by the second comparisons (the released-code replays);
    "" when it is clear of its step (|z| ≥ :data:`AT_THRESHOLD` × critical) and survives.
    """
    zs = np.sort(_family_z(results))[::-1]
    n, size = len(zs), abs(z)
    rank = int(np.sum(zs > size)) + 1
    critical = NormalDist().inv_cdf(1 - alpha / (2 * (n - rank + 1)))
    extended = _family_z(results, seconds=True)
    extra = len(extended) - n
    survives = size >= _holm_cutoff(extended, alpha)
    if size >= AT_THRESHOLD * critical and survives:
        return ""
    text = (
        f"at the Holm threshold: rank {rank} of {n}, |z| = {size:.3f} against {critical:.3f} "
        "at its step"
    )
    if extra:
        text += f"; with the {extra} second comparisons (released code) in the family it is " + (
            "still rejected" if survives else "not rejected"
        )
    return text


def with_family_wise(
    results: Sequence[NumberResult], errata: list[ErratumEntry]
) -> list[NumberResult]:
    """The numbers with Holm's procedure (:func:`family_wise`) deciding each *differs*."""
    n, _, cutoff = family_wise(results)
    out = []
    for r in results:
        if r.in_family and r.verdict in (DIFFERS, WITHIN_NOISE):
            assert r.z is not None
            verdict = number_verdict(r.z, False, cutoff=cutoff)
            if verdict != r.verdict:
                why = (
                    f"|z| = {abs(r.z):.2f} > {Z_NOISE:g} but not family-wise significant "
                    f"(Holm over {n} numbers at α = {ALPHA:g}: |z| ≥ {cutoff:.2f})"
                    if verdict == WITHIN_NOISE
                    else likely_reason(r.entry, errata)
                )
                r = replace(r, verdict=verdict, detail="; ".join(t for t in (why, r.detail) if t))
            if verdict == DIFFERS:
                margin = holm_margin(results, r.z)
                r = replace(r, detail="; ".join(t for t in (margin, r.detail) if t))
        out.append(r)
    return out


#: Minimal detectable difference in standard errors: a two-sided test at α = 0.05 with 80 %
#: power detects a difference of (1.96 + 0.84) combined standard errors.
DETECTABLE = 2.8
#: Our standard error "dwarfs" the paper's when it is this many times larger.
DWARFS = 3.0


def _detectable(entry: NumberEntry, se: float | None) -> str:
    """For a row whose standard error dwarfs the paper's: the smallest difference it detects."""
    paper = _paper_se(entry)
    if se is None or not math.isfinite(se) or not paper or se < DWARFS * paper:
        return ""
    smallest = DETECTABLE * math.hypot(se, paper) / abs(entry.scale)
    return f"our se is {se / paper:.0f}× the paper's: detects differences ≥ {smallest:.2g}"


def _not_comparable(entry: NumberEntry, ours: float) -> str:
    """Why a number is not comparable, and where ours lies in the plausible readings' range."""
    text = f"hinges on {entry.unstated}"
    if entry.plausible:
        lo, hi = entry.plausible
        where = "inside" if lo <= entry.value <= hi else "outside"
        text += f"; plausible readings give {lo:g} to {hi:g}: "
        text += f"the paper's {entry.value:g} is {where}"
        text += f" (ours, {ours / entry.scale:.4g}, is for our reading)"
    return text


def _ratio_scale(
    entry: NumberEntry, result: ResultSet, ours: float, se: float | None
) -> tuple[float, bool, str, float, float]:
    """(z, printed equal, note) on the ratio scale: ours / ours(ratio_to) against paper / paper
    (ratio_to); standard errors as relative errors in quadrature (the paper's printed ±)."""
    ref = get(entry.ratio_to)
    assert isinstance(ref, NumberEntry)
    ref_ours, ref_se, _, _ = _single(result, ref)
    if ref_ours is None or ref_ours == 0:
        return math.nan, False, f"no value of {ref.id} to form the ratio", math.nan, math.nan
    ratio = ours / ref_ours
    paper = entry.value / ref.value

    def rel(s: float | None, v: float) -> float:
        return 0.0 if s is None or not math.isfinite(s) or v == 0 else abs(s / v)

    se_ours = abs(ratio) * math.hypot(rel(se, ours), rel(ref_se, ref_ours))
    p_se, r_se = _paper_se(entry), _paper_se(ref)
    se_paper = abs(paper) * math.hypot(rel(p_se, entry.scaled), rel(r_se, ref.scaled))
    z, _, se = combined_z(ratio, paper, se_ours or None, se_paper or None)
    note = (
        f"compared as a ratio to {ref.id}: ours {ratio:.3f} ± {se_ours:.3f}, "
        f"paper {paper:.3f} ± {se_paper:.3f}"
    )
    return z, False, note, ratio - paper, se
