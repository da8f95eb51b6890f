"""A claim's verdict: its check's rows prepared (closed forms, exact points), the rule of its kind
applied (:data:`KINDS`), the outcome made a verdict.

Closed forms in checks (``theory_metric``, ``theory_stderr``): the sample of a heavy-tailed
estimator (SM⁺⁺ at large ‖x + y‖) misses the region carrying its second moment, so a check uses the
closed form where one exists (HRF Lemma 2.2, Thm 3.1; CSE Thm 3.1).

The rule of each check kind of :data:`rfbench.present.reference.CHECKS` is the function of that
name in :mod:`rfbench.present.report.rules` (docs/extending.md#a-report-claim).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from rfbench.present.reference import CHECKS, ClaimEntry, ErratumEntry
from rfbench.present.report import rules
from rfbench.present.report.checks import Context
from rfbench.present.report.frames import key_columns, plain
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

#: Kinds decided by a person, never by a rule.
NO_RULE = frozenset({"manual"})


def _rules() -> dict[str, Callable[[Context], Outcome]]:
    out = {}
    for kind in sorted(set(CHECKS) - NO_RULE):
        out[kind] = getattr(rules, kind, None)
        if not callable(out[kind]):
            raise ImportError(f"check kind {kind!r} needs exactly one rule function of that name")
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


#: Columns a closed form averages over: null in a closed-form row, they match any value (the
#: expected MSE of one repetition, of the paper's random stream or ours, is the same number).
EXPECTED_OVER = frozenset({"rep", "protocol"})


def _theory_lookup(rows: pd.DataFrame, theory_metric: str) -> list[tuple[list[int], dict]]:
    """The ``theory_metric`` rows by their pattern of known key columns (positions → values →
    value), most specific first; a null :data:`EXPECTED_OVER` column does not distinguish the rows a
    closed form describes.
    """
    keys = [c for c in key_columns(rows) if c != "metric"]
    theory = rows[rows["metric"] == theory_metric]
    patterns: dict[tuple[int, ...], dict[tuple[Any, ...], float]] = {}
    for point, value in zip(_point_keys(theory), theory["value"], strict=True):
        known = tuple(
            i for i, v in enumerate(point) if v is not None or keys[i] not in EXPECTED_OVER
        )
        patterns.setdefault(known, {})[tuple(point[i] for i in known)] = float(value)
    # the most specific pattern first: a closed form at the row's exact point wins
    return [(list(k), v) for k, v in sorted(patterns.items(), key=lambda kv: -len(kv[0]))]


def _closed_forms(rows: pd.DataFrame, metric: str, theory_metric: str) -> dict[Any, float]:
    """Index of each ``metric`` row → the closed form ``theory_metric`` at its point (key columns
    but ``metric``), where there is one."""
    lookup = _theory_lookup(rows, theory_metric)
    mine = rows[rows["metric"] == metric]
    out = {}
    for i, point in zip(mine.index, _point_keys(mine), strict=True):
        for known, values in lookup:
            found = values.get(tuple(point[j] for j in known))
            if found is not None:
                out[i] = found
                break
    return out


def _point_keys(rows: pd.DataFrame) -> list[tuple[Any, ...]]:
    keys = [c for c in key_columns(rows) if c != "metric"]
    return [tuple(plain(v) for v in row) for row in rows[keys].itertuples(index=False, name=None)]


def prefer_closed_form(rows: pd.DataFrame, metric: str, theory_metric: str) -> pd.DataFrame:
    """Rows of ``metric`` with the exact value of ``theory_metric`` at the same point where it
    exists (standard error 0, resolved; ``closed_form`` says which rows).
    """
    if rows.empty or "metric" not in rows.columns:
        return rows
    theory = _closed_forms(rows, metric, theory_metric)
    out = rows.copy()
    out["closed_form"] = False
    if theory:
        idx = list(theory)
        out.loc[idx, "value"] = list(theory.values())
        out.loc[idx, "stderr"] = 0.0
        out.loc[idx, "closed_form"] = True
        if "resolved" in out.columns:
            out.loc[idx, "resolved"] = True
    return out


def closed_form_stderr(rows: pd.DataFrame, metric: str, theory_mse: str) -> pd.DataFrame:
    """Rows of ``metric`` (a bias or mean) with standard error √(theory_mse / n_trials): under the
    claim that the estimator is unbiased its variance is its MSE.
    """
    if rows.empty or "metric" not in rows.columns:
        return rows
    out = rows.copy()
    for i, mse in _closed_forms(rows, metric, theory_mse).items():
        n = plain(out.at[i, "n_trials"])
        if n:
            out.at[i, "stderr"] = math.sqrt(mse / float(n))
    return out


def closed_form_note(rows: pd.DataFrame, check: Mapping[str, Any]) -> str:
    """Which values the check compares: closed forms, closed-form standard errors."""
    if "theory_metric" in check and "closed_form" in rows.columns:
        mine = rows[rows["metric"] == check["metric"]]
        n = int(mine["closed_form"].sum())
        return (
            f"by closed form ({check['theory_metric']}) for {n} of {len(mine)} rows, "
            "empirical values elsewhere"
        )
    if "theory_stderr" in check:
        return f"standard errors from the closed form √({check['theory_stderr']}/n)"
    return ""


#: Relative error metrics: a value at round-off means every draw of the sample is exact.
RELATIVE_ERRORS = frozenset({"rel_rmse", "rel_mae"})
#: Largest relative error that is floating-point round-off rather than a random error.
EXACT_TOL = 1e-10


def exact_points(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows of a relative error ``metric`` at a zero-variance point marked resolved, standard error
    0: at θ = 0 with equal norms every draw equals the kernel (HRF Thm 3.5, CSE Lemma 3.2), so a
    value at most :data:`EXACT_TOL` with equal ``q05`` and ``q95`` (where given) is exact.
    """
    if rows.empty or metric not in RELATIVE_ERRORS or "resolved" not in rows.columns:
        return rows
    spread: dict[tuple[Any, ...], list[float]] = {}
    quantiles = rows[rows["metric"].isin(["q05", "q95"])]
    for point, value in zip(_point_keys(quantiles), quantiles["value"], strict=True):
        spread.setdefault(point, []).append(float(value))
    out = rows.copy()
    mine = out[(out["metric"] == metric) & (out["value"].abs() <= EXACT_TOL)]
    exact = []
    for i, point in zip(mine.index, _point_keys(mine), strict=True):
        qs = spread.get(point, [])
        if len(qs) < 2 or max(qs) - min(qs) <= EXACT_TOL * max(abs(q) for q in qs):
            exact.append(i)
    if exact:
        out.loc[exact, "resolved"] = True
        out.loc[exact, "stderr"] = 0.0
    return out


def computed(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows computed rather than sampled (``n_trials`` 0) with standard error 0 where none is
    given.
    """
    if rows.empty or "n_trials" not in rows.columns:
        return rows
    n = pd.to_numeric(rows["n_trials"], errors="coerce")
    mask = (n == 0) & rows["stderr"].isna()
    if not mask.any():
        return rows
    out = rows.copy()
    out.loc[mask, "stderr"] = 0.0
    return out
