"""The report's verdicts as rows for the site: one per published number and per claim."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rfbench.present.report import Report
from rfbench.present.report.numbers import printed_literal


@dataclass(frozen=True)
class VerdictRow:
    paper: str
    kind: str  # "number" | "claim"
    id: str
    figure: str
    what: str
    paper_value: str
    ours: str
    verdict: str
    reason: str


def _fmt(value: float | None, se: float | None = None, scale: float = 1.0) -> str:
    """``value ± se`` in the paper's printed units (our value divided by the entry's scale)."""
    if value is None or not math.isfinite(value):
        return ""
    text = f"{value / scale:.4g}"
    return text + (f" ± {se / abs(scale):.2g}" if se is not None and math.isfinite(se) else "")


def verdict_rows(report: Report) -> list[VerdictRow]:
    """Every number and claim of the report, in report order."""
    rows = []
    for r in report.numbers:
        e = r.entry
        pm = e.stderr if e.stderr is not None else e.std
        paper = printed_literal(e) + (f" ± {pm:g}" if pm is not None else "")
        reason = getattr(r, "reason", "") or r.detail
        ours, what = _fmt(r.ours, r.stderr, e.scale), e.source or e.quantity
        rows.append(
            VerdictRow(e.paper, "number", e.id, e.figure, what, paper, ours, r.verdict, reason)
        )
    for c in report.claims:
        e = c.entry
        reason = getattr(c, "reason", "") or c.detail
        rows.append(
            VerdictRow(e.paper, "claim", e.id, e.figure, e.statement, "", "", c.verdict, reason)
        )
    return rows
