"""Verdicts on synthetic rows: untestable samples, closed forms preferred, differences by SE;
and on the committed results: every discrepancy carries a measured reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rfbench.present.reference.loader import make_entry
from rfbench.present.report.claims import evaluate_claim
from rfbench.present.report.rows import ResultSet
from rfbench.present.report.verdicts import (
    CONSISTENT,
    DIFFERS,
    DOES_NOT_HOLD,
    HOLDS,
    ORDERING_CONFIRMED,
    UNTESTABLE,
    VERIFIED,
    WITHIN_NOISE,
)

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _claim(check: dict) -> object:
    raw = {"id": "hrf-test-claim", "source": "test", "statement": "a claim", "check": check}
    return make_entry("claim", raw, "hrf", "test.toml")


def _rows(values: dict[str, list[float]], resolved: dict[str, list[bool]] | None = None):
    """Pointwise-like rows: estimator × theta, metric rel_rmse, optional resolved/n_needed."""
    thetas = [0.0, 1.0, 2.0]
    out = []
    for est, vals in values.items():
        for i, (theta, v) in enumerate(zip(thetas, vals, strict=True)):
            row = {
                "experiment": "pointwise",
                "figure": "f",
                "estimator": est,
                "metric": "rel_rmse",
                "value": v,
                "stderr": 0.01,
                "n_trials": 1000,
                "theta": theta,
            }
            if resolved is not None:
                row["resolved"] = resolved[est][i]
                row["n_needed"] = 1e6 if not resolved[est][i] else np.nan
            out.append(row)
    return pd.DataFrame(out)


COUNT = {
    "kind": "count",
    "experiment": "pointwise",
    "metric": "rel_rmse",
    "aggregate": "max over theta",
    "estimator": "a",
    "best": "min",
    "for_each": ["figure"],
    "at_least_fraction": 1.0,
}


def test_unresolved_rows_make_a_check_untestable_not_false() -> None:
    # 'a' looks worse (its max 5 > 2), but b's sample does not resolve its tail
    rows = _rows({"a": [1, 5, 1], "b": [2, 2, 2]}, {"a": [True] * 3, "b": [True, False, True]})
    res = evaluate_claim(_claim(COUNT), ResultSet(rows), {})
    assert res.verdict == UNTESTABLE
    assert "1e+06" in res.detail  # the n that would resolve it
    # the same rows, all resolved: a genuine failure
    rows["resolved"] = True
    assert evaluate_claim(_claim(COUNT), ResultSet(rows), {}).verdict == DOES_NOT_HOLD


def test_missing_resolved_column_means_resolved() -> None:
    rows = _rows({"a": [1, 5, 1], "b": [2, 2, 2]})
    assert evaluate_claim(_claim(COUNT), ResultSet(rows), {}).verdict == DOES_NOT_HOLD


def test_only_resolved_comparisons_decide() -> None:
    ordering = {
        "kind": "ordering",
        "experiment": "pointwise",
        "metric": "rel_rmse",
        "order": ["a", "b"],
        "for_each": ["figure"],
    }
    # at θ = 2 the larger side b is unresolved (its truth may be larger still): left out
    rows = _rows({"a": [1, 1, 9], "b": [2, 2, 2]}, {"a": [True] * 3, "b": [True, True, False]})
    res = evaluate_claim(_claim(ordering), ResultSet(rows), {})
    assert res.verdict == ORDERING_CONFIRMED
    assert "left out" in res.detail
    # the smaller side a unresolved and already too large: its true rel. RMSE is larger still
    rows = _rows({"a": [1, 1, 9], "b": [2, 2, 2]}, {"a": [True, True, False], "b": [True] * 3})
    assert evaluate_claim(_claim(ordering), ResultSet(rows), {}).verdict == DOES_NOT_HOLD


def test_closed_form_preferred_over_empirical_max() -> None:
    rows = _rows({"a": [1, 1, 1], "b": [0.5, 0.5, 0.5]})  # empirical: b (heavy tail) looks best
    theory = rows.assign(metric="theory_rel_rmse", stderr=np.nan, n_trials=0)
    theory.loc[theory["estimator"] == "b", "value"] = [0.5, 4.0, 0.5]
    both = pd.concat([rows, theory], ignore_index=True)
    assert evaluate_claim(_claim(COUNT), ResultSet(both), {}).verdict == DOES_NOT_HOLD
    check = {**COUNT, "theory_metric": "theory_rel_rmse"}
    res = evaluate_claim(_claim(check), ResultSet(both), {})
    assert res.verdict == VERIFIED and "closed form" in res.detail


@pytest.mark.parametrize(
    ("diff", "stderr", "verdict"),
    [
        (0.005, 0.001, HOLDS),  # |d| + 2 se = 0.0078 ≤ 0.01
        (0.005, 0.007, CONSISTENT),  # |d| ≤ 0.01 < |d| + 2 se: equality not shown
        (0.018, 0.007, WITHIN_NOISE),  # beyond the tolerance by less than 2 se
        (0.05, 0.007, DOES_NOT_HOLD),
    ],
)
def test_difference_judged_with_its_standard_error(
    diff: float, stderr: float, verdict: str
) -> None:
    rows = pd.DataFrame(
        [
            {"experiment": "classify", "figure": "t", "estimator": e, "metric": "accuracy",
             "value": v, "stderr": stderr, "n_trials": 500, "dataset": "wifi"}
            for e, v in (("fast", 0.5 + diff), ("regular", 0.5))
        ]
    )  # fmt: skip
    check = {
        "kind": "equals_within",
        "experiment": "classify",
        "metric": "accuracy",
        "lhs": {"estimator": "fast"},
        "rhs": {"estimator": "regular"},
        "abs_tol": 0.01,
        "for_each": ["dataset"],
    }
    # se of the difference = stderr·√2 (0.0099 for 0.007): an equality holds only when
    # |d| + 2 se ≤ the tolerance, and fails only when |d| − 2 se > it
    assert evaluate_claim(_claim(check), ResultSet(rows), {}).verdict == verdict


@pytest.mark.slow
def test_every_discrepancy_in_the_committed_report_has_a_measured_reason(committed_report) -> None:  # type: ignore[no-untyped-def]
    report = committed_report
    bad = [r for r in report.numbers if r.verdict == DIFFERS and "measured:" not in r.detail]
    bad += [r for r in report.claims if r.verdict == DOES_NOT_HOLD and "measured:" not in r.detail]
    assert not [r.entry.id for r in bad]
    assert not any("cause not found" in r.detail for r in (*report.numbers, *report.claims))
