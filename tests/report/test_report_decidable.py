"""Decide before calling anything untestable (issue 16): each rule that turns an
"untestable at this sample size" into a verdict, on synthetic rows, and the eight claims of the
issue on the committed results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from rfbench.present.reference.loader import ReferenceDataError, make_entry
from rfbench.present.report.claims import evaluate_claim
from rfbench.present.report.rows import ResultSet
from rfbench.present.report.verdicts import (
    CONSISTENT,
    DOES_NOT_HOLD,
    HOLDS,
    ORDERING_CONFIRMED,
    UNTESTABLE,
    VERIFIED,
)

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _claim(check: dict[str, Any]) -> Any:
    raw = {"id": "hrf-test-claim", "source": "test", "statement": "a claim", "check": check}
    return make_entry("claim", raw, "hrf", "test.toml")


def _row(est: str, metric: str, value: float, **cols: Any) -> dict[str, Any]:
    base = {
        "experiment": "pointwise",
        "figure": "f",
        "estimator": est,
        "metric": metric,
        "value": value,
        "stderr": 0.01,
        "n_trials": 1000,
        "resolved": True,
    }
    return {**base, **cols}


def _verdict(check: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    return evaluate_claim(_claim(check), ResultSet(pd.DataFrame(rows)), {}).verdict


LIMIT = {
    "kind": "limit",
    "experiment": "pointwise",
    "metric": "rel_rmse",
    "select": {"estimator": "h"},
    "along": "theta",
    "toward": "min",
    "value": 0.0,
    "abs_tol": 1e-9,
}


@pytest.mark.parametrize(("q95", "expected"), [(np.e, HOLDS), (3.5, UNTESTABLE)])
def test_a_zero_variance_point_is_exact(q95: float, expected: str) -> None:
    # round-off error and q05 = q95: every draw is exact, whatever the tail flag says
    rows = [
        _row("h", "rel_rmse", 2e-16, theta=0.0, resolved=False),
        _row("h", "q05", np.e, theta=0.0),
        _row("h", "q95", q95, theta=0.0),
        _row("h", "rel_rmse", 0.3, theta=1.0, resolved=False),
    ]
    assert _verdict(LIMIT, rows) == expected


COUNT = {
    "kind": "count",
    "experiment": "clusters",
    "metric": "mse",
    "aggregate": "mean over rep",
    "estimator": "sm",
    "best": "max",
    "for_each": ["figure"],
    "at_least_fraction": 1.0,
}


def _reps(est: str, values: list[float], resolved: bool, **cols: Any) -> list[dict[str, Any]]:
    return [
        _row(
            est, "mse", v, experiment="clusters", rep=i, protocol="paper", resolved=resolved, **cols
        )
        for i, v in enumerate(values)
    ]


def test_closed_form_aligns_with_per_repetition_rows() -> None:
    # the sampled reps say trig is worse, but sm's reps are unresolved: untestable ...
    rows = _reps("sm", [0.01, 0.02], False) + _reps("trig", [0.03, 0.03], True)
    assert _verdict(COUNT, rows) == UNTESTABLE
    # ... until the closed forms (no rep, no protocol: the expectation) decide every rep
    theory = [
        _row("sm", "theory_mse", 0.07, experiment="clusters", stderr=np.nan),
        _row("trig", "theory_mse", 0.03, experiment="clusters", stderr=np.nan),
    ]
    assert _verdict({**COUNT, "theory_metric": "theory_mse"}, rows + theory) == VERIFIED
    # a closed form of another point (other m) does not apply
    other = [{**t, "m": 64} for t in theory]
    rows_m = [{**r, "m": 20} for r in rows]
    assert _verdict({**COUNT, "theory_metric": "theory_mse"}, rows_m + other) == UNTESTABLE


def test_a_mean_over_repetitions_is_judged_on_the_pooled_sample() -> None:
    check = {**COUNT, "estimator": "trig", "best": "min"}
    # each rep of sm alone needs 5000 draws; ten reps of 1000 pool to 10000
    sm = _reps("sm", [0.07] * 10, False, n_needed=5000.0)
    trig = _reps("trig", [0.03] * 10, True)
    assert _verdict(check, sm + trig) == ORDERING_CONFIRMED
    assert _verdict(check, sm[:3] + trig[:3]) == UNTESTABLE


ORDER = {
    "kind": "ordering",
    "experiment": "pointwise",
    "metric": "mse",
    "order": ["a", "b", "c"],
    "strict": True,
}


def test_an_ordering_fails_on_a_resolved_failing_link() -> None:
    # a < b unresolved, b < c resolved and false by many standard errors
    rows = [
        _row("a", "mse", 0.01, resolved=False),
        _row("b", "mse", 0.05),
        _row("c", "mse", 0.001),
    ]
    assert _verdict(ORDER, rows) == DOES_NOT_HOLD
    # only the unresolved link could fail: nothing decides
    rows = [_row("a", "mse", 0.01, resolved=False), _row("b", "mse", 0.05), _row("c", "mse", 0.1)]
    assert _verdict(ORDER, rows) == UNTESTABLE


def test_an_unresolved_mean_that_is_already_too_large_fails() -> None:
    # 'a' should be smallest; its sample misses the tail, so its true MSE is larger still
    rows = [_row("a", "mse", 0.5, resolved=False), _row("b", "mse", 0.05), _row("c", "mse", 0.1)]
    assert _verdict(ORDER, rows) == DOES_NOT_HOLD
    # the same numbers for a statistic that is not a mean of nonnegative draws: undecided
    assert _verdict({**ORDER, "metric": "bias"}, [{**r, "metric": "bias"} for r in rows]) == (
        UNTESTABLE
    )
    # the larger side unresolved: its truth may be larger, nothing decides
    rows = [_row("a", "mse", 0.5), _row("b", "mse", 0.05, resolved=False), _row("c", "mse", 0.9)]
    assert _verdict(ORDER, rows) == UNTESTABLE


LESS = {
    "kind": "less_than",
    "experiment": "pointwise",
    "metric": "rel_mae",
    "lhs": {"estimator": "pos", "upper_bound": 2.0},
    "rhs": {"estimator": "trig"},
    "bound_reason": "nonnegative unbiased",
}


@pytest.mark.parametrize(("rhs", "expected"), [(154.0, ORDERING_CONFIRMED), (1.9, UNTESTABLE)])
def test_a_bounded_statistic_is_decided_by_its_bound(rhs: float, expected: str) -> None:
    rows = [_row("pos", "rel_mae", 1.5, resolved=False), _row("trig", "rel_mae", rhs)]
    assert _verdict(LESS, rows) == expected
    no_bound = {**LESS, "lhs": {"estimator": "pos"}}
    no_bound.pop("bound_reason")
    assert _verdict(no_bound, rows) == UNTESTABLE


def test_a_bound_needs_its_reason() -> None:
    bad = dict(LESS)
    bad.pop("bound_reason")
    with pytest.raises(ReferenceDataError, match="bound_reason"):
        _claim(bad)


@pytest.fixture(scope="module")
def committed(committed_report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {r.entry.id: r.verdict for r in committed_report.claims}


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("hrf-thm3.5-angular-zero-at-0", HOLDS),
        ("cse-zero-variance-at-endpoints", HOLDS),
        ("hrf-table3-favor-worst", VERIFIED),
        ("simrf-fig7-gram-decreases-with-m", ORDERING_CONFIRMED),
        ("hrf-table1-ordering", DOES_NOT_HOLD),
        ("hrf-table1-hrfs-best", DOES_NOT_HOLD),
        ("cse-fig2-trig-worse-at-large-angles", ORDERING_CONFIRMED),
        ("cse-fig3-more-features-fewer-outliers", ORDERING_CONFIRMED),
    ],
)
def test_the_eight_claims_are_decided(committed: dict[str, str], claim: str, verdict: str) -> None:
    assert committed[claim] == verdict
    assert UNTESTABLE not in committed.values()


def test_confirmed_only_when_every_link_is_significant_and_large_enough() -> None:
    check = {**ORDER, "order": ["a", "b"], "metric": "accuracy"}
    rows = [_row("a", "accuracy", 0.50, stderr=0.001), _row("b", "accuracy", 0.51, stderr=0.001)]
    assert _verdict(check, rows) == ORDERING_CONFIRMED  # gap 0.01, z ≈ 7
    weak = [{**r, "stderr": 0.01} for r in rows]
    assert _verdict(check, weak) == CONSISTENT  # the same gap, z ≈ 0.7
    # a declared effect size ("substantially") is part of the claim: a gap of 0.01 ± 0.0014
    # falls short of 0.02 by more than 2 se (does not hold), exceeds 0.005 by more (confirmed)
    big = {**check, "min_gap": 0.02, "effect_reason": "substantially"}
    assert _verdict(big, rows) == DOES_NOT_HOLD
    assert _verdict({**big, "min_gap": 0.005}, rows) == ORDERING_CONFIRMED
    assert _verdict({**big, "min_gap": 0.009}, rows) == CONSISTENT  # 0.01 − 2 se < 0.009
    with pytest.raises(ReferenceDataError, match="effect_reason"):
        _claim({**check, "min_gap": 0.02})
