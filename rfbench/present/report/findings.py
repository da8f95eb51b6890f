"""The *Findings* that open ``REPORT.md``: the few results that matter, computed from the
verdicts and the measured reasons (never typed text, so they follow the results).

Three kinds: claims that do not hold (with the measured cause — among them a paper contradicting
its own theorem), claims that hold only on part of their range (a failing comparison among
passing ones), and offsets whose cause is not established — only those the results measure (a
partial run's missing figures are listed by :mod:`rfbench.present.report.coverage`, not guessed at).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rfbench.present.report.verdicts import DOES_NOT_HOLD, first_sentence

if TYPE_CHECKING:
    from rfbench.present.report import Report

_PART = re.compile(r"^(\d+) of (\d+) comparisons hold")


def _part_of_range(detail: str) -> str:
    """ "k of n comparisons hold" with 0 < k < n (the claim holds on part of its range)."""
    for piece in detail.split("; "):
        m = _PART.match(piece)
        if m and 0 < int(m.group(1)) < int(m.group(2)):
            return piece
    return ""


def findings(report: Report) -> list[str]:
    """The Findings section (a bulleted list; empty when nothing was checked)."""
    by_key = {r.key: r for r in report.reasons}
    contradicted, partial = [], []
    for r in report.claims:
        if r.verdict != DOES_NOT_HOLD:
            continue
        part = _part_of_range(r.detail)
        key = re.search(r"\[([a-z]+-reason-\d+)\]", r.detail)
        reason = by_key[key.group(1)] if key else None
        cause = first_sentence(reason.text, 200) if reason and reason.measured else ""
        line = f"- `{r.entry.id}` ({r.entry.figure}): {first_sentence(r.entry.statement, 120)}"
        if part:
            partial.append(f"{line} — holds on part of its range only: {part}.")
        else:
            contradicted.append(f"{line} — does not hold" + (f": {cause}." if cause else "."))
    unexplained = [
        f"- {', '.join(f'`{i}`' for i in r.ids[:3])}{' …' if len(r.ids) > 3 else ''}: "
        f"{first_sentence(r.text.removeprefix('Cause not established. '), 220)} "
        f"([{r.key}](#{r.key}))."
        for r in report.reasons
        if not r.established and r.measured
    ]
    if not (contradicted or partial or unexplained):
        return []
    lines = ["## Findings", ""]
    if contradicted:
        lines += ["**Claims the results contradict**", "", *contradicted, ""]
    if partial:
        lines += ["**Claims true on part of their range only**", "", *partial, ""]
    if unexplained:
        lines += ["**Offsets whose cause is not established**", "", *unexplained, ""]
    return lines
