"""A claim's verdict: its check's rows prepared (closed forms, exact points), the rule of its kind
applied (:data:`KINDS`), the outcome made a verdict.

The rule of each check kind of :data:`rfbench.present.reference.CHECKS` is the function of that
name in one of :data:`RULE_MODULES` (docs/extending.md#a-report-claim).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType

import pandas as pd

from rfbench.present.reference import CHECKS, ClaimEntry, ErratumEntry
from rfbench.present.report import comparisons, curves, rankings
from rfbench.present.report.checks import Context
from rfbench.present.report.closed_forms import (
    closed_form_note,
    closed_form_stderr,
    computed,
    exact_points,
    prefer_closed_form,
)
from rfbench.present.report.rows import ResultSet, explain_empty, select
from rfbench.present.report.verdicts import (
    FAIL,
    MANUAL,
    NOISE,
    NOT_REPRODUCIBLE,
    NOT_RUN,
    PASS,
    UNRESOLVED,
    WEAK,
    ClaimResult,
    NumberResult,
    Outcome,
    claim_verdict,
    likely_reason,
)

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


def evaluate_claim(
    entry: ClaimEntry,
    result: ResultSet,
    numbers: Mapping[str, NumberResult],
    errata: Sequence[ErratumEntry] = (),
) -> ClaimResult:
    """A claim's verdict on the results (``numbers``: the evaluated number entries; ``errata``: the
    likely reason of a claim that does not hold); an error in the check itself raises.
    """
    check = entry.check
    if not entry.reproducible:
        return ClaimResult(entry, NOT_REPRODUCIBLE, entry.reason)
    if check.kind == "manual":
        return ClaimResult(entry, MANUAL, check.get("reason", ""))
    if check.experiment is not None:
        rows = result.experiment(check.experiment)
        if rows.empty:
            return claim_verdict(entry, Outcome(NOT_RUN, f"no {check.experiment} results"))
        where = check.where
        picked = select(rows, where)
        if picked.empty:
            return claim_verdict(entry, Outcome(*explain_empty(rows, where)))
        metric = str(check.metric)
        rows = exact_points(computed(picked.reset_index(drop=True)), metric)
        if check.theory_metric is not None:
            rows = prefer_closed_form(rows, metric, check.theory_metric)
        if check.theory_stderr is not None:
            rows = closed_form_stderr(rows, metric, check.theory_stderr)
        note = closed_form_note(rows, check)
    else:
        rows, note = pd.DataFrame(), ""
    analytic = _all_exact(rows, check.metric)
    evaluate: Callable[[Context], Outcome] = KINDS[check.kind]
    # A check that raises is a bug in the check or the code (rfbench report exits 1 with a log),
    # never a verdict.
    outcome = evaluate(Context(entry, rows, numbers))
    if note and outcome.status in (PASS, WEAK, FAIL, NOISE, UNRESOLVED):
        outcome = Outcome(outcome.status, f"{note}; {outcome.detail}")
    return claim_verdict(entry, outcome, likely_reason(entry, list(errata)), analytic)


def _all_exact(rows: pd.DataFrame, metric: str | None) -> bool:
    """Is every row of the check's metric exact (a closed form or computed, standard error 0)?"""
    if rows.empty or metric is None or "metric" not in rows.columns:
        return False
    mine = rows[rows["metric"] == metric]
    se = pd.to_numeric(mine["stderr"], errors="coerce")
    return bool(len(mine)) and bool((se == 0).all())
