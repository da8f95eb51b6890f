"""The rule of each check kind of :data:`rfbench.present.reference.CHECKS`: the function of that
name in one of :data:`RULE_MODULES` (docs/extending.md#a-report-claim).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from rfbench.present.reference import CHECKS
from rfbench.present.report import comparisons, curves, rankings
from rfbench.present.report.checks import Context
from rfbench.present.report.verdicts import Outcome

#: The modules holding the rules: ``rankings`` (ordering, count), ``comparisons`` (less_than,
#: equals_within, ratio_at_least), ``curves`` (monotone, limit).
RULE_MODULES: tuple[ModuleType, ...] = (rankings, comparisons, curves)
#: Kinds decided by a person, never by a rule.
NO_RULE = frozenset({"manual"})


def _rules() -> dict[str, Callable[[Context], Outcome]]:
    out = {}
    for kind in sorted(set(CHECKS) - NO_RULE):
        found = [getattr(m, kind) for m in RULE_MODULES if callable(getattr(m, kind, None))]
        if len(found) != 1:
            raise ImportError(f"check kind {kind!r} needs exactly one rule function of that name")
        out[kind] = found[0]
    return out


KINDS: dict[str, Callable[[Context], Outcome]] = _rules()
