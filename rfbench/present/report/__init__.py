"""``rfbench report``: the papers' published numbers and claims next to ours, with verdicts
(docs/architecture.md#the-report-verdicts-and-reasons).

Modules: ``rows`` and ``frames`` (the results), ``numbers``, ``claims`` and ``verdicts`` (the
verdicts and readings; ``claims`` finds each check kind's rule in ``rules``, built on ``checks``),
``build`` (the report, its measured reasons filled in), then the writers ``summary`` (with the
findings), ``render``, ``beyond*``.
API: :func:`build_report` (a :class:`Report`), :func:`write_report` (the markdown files).
"""

from rfbench.present.report.build import Report, build_report, write_report
from rfbench.present.report.verdicts import CLAIM_VERDICTS, NUMBER_VERDICTS

__all__ = [
    "CLAIM_VERDICTS",
    "NUMBER_VERDICTS",
    "Report",
    "build_report",
    "write_report",
]
