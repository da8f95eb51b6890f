"""The comparison rule of each check kind (vocabulary in :mod:`rfbench.present.reference`).

Each function takes a :class:`rfbench.present.report.checks.Context` and returns an
:class:`~rfbench.present.report.verdicts.Outcome`; ``manual`` checks never get here.
"""

from __future__ import annotations

from collections.abc import Callable

from rfbench.present.report.checks import Context
from rfbench.present.report.comparisons import equals_within, less_than, ratio_at_least
from rfbench.present.report.curves import limit, monotone
from rfbench.present.report.rankings import count, ordering
from rfbench.present.report.verdicts import Outcome

KINDS: dict[str, Callable[[Context], Outcome]] = {
    "ordering": ordering,
    "count": count,
    "less_than": less_than,
    "equals_within": equals_within,
    "ratio_at_least": ratio_at_least,
    "monotone": monotone,
    "limit": limit,
}
