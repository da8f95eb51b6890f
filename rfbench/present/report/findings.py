"""The *Findings* that open ``REPORT.md``, computed from the verdicts, the measured reasons and the
beyond-the-papers results (never typed text): what reproduced, the claims that do not hold or depend
on the reading, the errata that change numbers, this repository's own headlines and the offsets
whose cause is not established.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from rfbench.compute.text import first_sentence
from rfbench.present.report.beyond import attention_headline, stabilised_headline
from rfbench.present.report.verdicts import (
    CONSISTENT,
    DEPENDS,
    DIFFERS,
    DOES_NOT_HOLD,
    HELD,
    HOLDS,
    ORDERING_CONFIRMED,
    REPLAYED,
    REPRODUCED,
    VERIFIED,
    WITHIN_NOISE,
    ClaimResult,
)

if TYPE_CHECKING:
    from rfbench.present.report import Report

_PART = re.compile(r"^(\d+) of (\d+) comparisons hold")
_REASON = re.compile(r"\[([a-z]+-reason-\d+)\]")


def _part_of_range(detail: str) -> str:
    """ "k of n comparisons hold" with 0 < k < n (the claim holds on part of its range)."""
    for piece in detail.split("; "):
        m = _PART.match(piece)
        if m and 0 < int(m.group(1)) < int(m.group(2)):
            return f"{m.group(1)} of {m.group(2)} comparisons hold"
    return ""


def _cause(report: Report, r: ClaimResult) -> str:
    by_key = {f.key: f for f in report.reasons}
    key = _REASON.search(r.detail)
    reason = by_key.get(key.group(1)) if key else None
    return first_sentence(reason.text, clause=True, limit=200) if reason and reason.measured else ""


def _reproduced(report: Report) -> list[str]:
    """What reproduced and how much: sampled, deterministic and replayed numbers apart."""
    ns, nd = report.number_counts(sampled=True), report.number_counts(sampled=False)
    c = report.claim_counts()
    sampled = ns[REPRODUCED] + ns[WITHIN_NOISE] + ns[DIFFERS]
    computed = nd[REPRODUCED] + nd[WITHIN_NOISE] + nd[DIFFERS]
    replayed = Counter(r.entry.figure for r in report.numbers if r.verdict == REPLAYED)
    lines = ["**What reproduced**", ""]
    if sampled:
        lines.append(
            f"- {ns[REPRODUCED]} of {sampled} published numbers compared with an independent "
            f"sample reproduce (|z| ≤ 2), {ns[WITHIN_NOISE]} are within noise and "
            f"{ns[DIFFERS]} differ (Holm's procedure over them); {nd[REPRODUCED]} of "
            f"{computed} deterministic values (closed forms, exact computations) equal the "
            "printed digits."
        )
    if replayed:
        figs = ", ".join(f"{fig} ({n} cells)" for fig, n in sorted(replayed.items()))
        lines.append(
            f"- *Replayed*, not reproduced: {figs} equal the paper when the authors' released "
            "random stream is replayed — equivalent code, not an independent reproduction."
        )
    held = c[HOLDS] + c[ORDERING_CONFIRMED]
    lines.append(
        f"- Claims: {c[VERIFIED]} verified analytically, {held} hold on samples, "
        f"{c[CONSISTENT]} consistent, {c[DEPENDS]} depend on the reading, {c[DOES_NOT_HOLD]} "
        "do not hold (below)."
    )
    return lines + [""]


def _line(r: ClaimResult) -> str:
    statement = first_sentence(r.entry.statement, clause=True, limit=120)
    return f"- `{r.entry.id}` ({r.entry.figure}): {statement}"


def _head(reading: str) -> str:
    """The name of a reading: its text before the first colon ("similar in size")."""
    return reading.split(":")[0].strip()


def _contradicted(report: Report) -> list[str]:
    out = []
    for r in report.claims:
        if r.verdict != DOES_NOT_HOLD:
            continue
        part = _part_of_range(r.detail)
        cause = _cause(report, r)
        text = f"{_line(r)} — *{DOES_NOT_HOLD}*" + (f" ({part})" if part else "")
        held = [(reading, v) for reading, v in r.readings[1:] if v in HELD]
        if held:  # a weaker reading holds (a deciding one would make it depend on the reading)
            heads = [f"{_head(reading)}: {v}" for reading, v in held]
            text += f" ({_head(r.readings[0][0])}; {'; '.join(heads)})"
        out.append(text + (f": {cause}." if cause else "."))
    return ["**Claims that do not hold**", "", *out, ""] if out else []


def _reading_dependent(report: Report) -> list[str]:
    out = []
    for r in report.claims:
        if r.verdict != DEPENDS:
            continue
        shown = "; ".join(
            f"{first_sentence(reading, clause=True, limit=90)}: {v}" for reading, v in r.readings
        )
        out.append(f"{_line(r)} — *{DEPENDS}*: {shown}.")
    return ["**Claims whose verdict depends on the reading**", "", *out, ""] if out else []


def _errata(report: Report) -> list[str]:
    verdicts = {r.entry.id: r for r in report.claims}
    out = []
    for e in report.errata:
        claim = verdicts.get(e.checked_by)
        if claim is None:
            continue
        out.append(
            f"- `{e.id}` ({e.source}): printed {e.printed}; corrected {e.corrected}. On the "
            f"results the printed form {claim.verdict} (`{claim.entry.id}`)."
        )
    return ["**Errata that change numbers**", "", *out, ""] if out else []


def findings(report: Report) -> list[str]:
    """The Findings section (a bulleted list; empty when nothing was checked)."""
    unexplained = [
        f"- {', '.join(f'`{i}`' for i in r.ids[:3])}{' …' if len(r.ids) > 3 else ''}: "
        f"{first_sentence(r.text.removeprefix('Cause not established. '), clause=True, limit=220)} "
        f"([{r.key}](#{r.key}))."
        for r in report.reasons
        if not r.established and r.measured
    ]
    body = [*_contradicted(report), *_reading_dependent(report), *_errata(report)]
    beyond = [h(report.results_dir) for h in (attention_headline, stabilised_headline)]
    if any(beyond):
        body += ["**Beyond the papers**", "", *[f"- {t}" for t in beyond if t], ""]
    if unexplained:
        body += ["**Offsets whose cause is not established**", "", *unexplained, ""]
    if not (body or report.numbers):
        return []
    return ["## Findings", "", *_reproduced(report), *body]
