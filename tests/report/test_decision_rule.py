"""The one decision rule (issue 30): a declared effect or tolerance is part of the claim, passes
and failures get the same 2-standard-error margin, and Holm's procedure decides a number's row."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rfbench.present.reference.loader import make_entry
from rfbench.present.report.claims import evaluate_claim
from rfbench.present.report.rows import ResultSet
from rfbench.present.report.rules import equal_within
from rfbench.present.report.verdicts import (
    CONSISTENT,
    DOES_NOT_HOLD,
    FAIL,
    NOISE,
    ORDERING_CONFIRMED,
    PASS,
    WEAK,
    WITHIN_NOISE,
)
from rfbench.present.statistics import holm


@pytest.mark.parametrize(
    ("diff", "se", "tol", "status"),
    [
        (0.0159, 0.0021, 0.016, WEAK),  # simrf-table2-plus-marginal's wifi: |d| ≤ tol < |d| + 2 se
        (-0.0060, 0.0030, 0.01, WEAK),  # simrf-table3-fast-orf-same's banknote
        (0.004, 0.002, 0.01, PASS),  # |d| + 2 se = 0.008 ≤ 0.01
        (0.012, 0.002, 0.01, NOISE),  # over by one se
        (0.02, 0.002, 0.01, FAIL),
        (0.01, 0.0, 0.01, PASS),  # exact values: the tolerance alone decides
        (0.0101, math.nan, 0.01, FAIL),
    ],
)
def test_an_equality_holds_only_when_its_interval_fits_the_tolerance(diff, se, tol, status):  # type: ignore[no-untyped-def]
    assert equal_within(diff, se, tol) == status
    assert equal_within(-diff, se, tol) == status  # symmetric in the sign of d


def _ordering(gaps: dict[str, tuple[float, float]]):  # type: ignore[no-untyped-def]
    """'b beats a by at least 0.0025' on data sets whose gap b − a and its se are given."""
    rows = []
    for ds, (gap, se) in gaps.items():
        for est, v in (("a", 0.5), ("b", 0.5 + gap)):
            rows.append(
                {"experiment": "classify", "figure": "t", "estimator": est, "dataset": ds,
                 "metric": "accuracy", "value": -v, "stderr": se / math.sqrt(2),
                 "n_trials": 500}
            )  # fmt: skip
    check = {
        "kind": "ordering",
        "experiment": "classify",
        "metric": "accuracy",
        "order": ["b", "a"],
        "min_gap": 0.0025,
        "effect_reason": "test",
        "for_each": ["dataset"],
    }
    raw = {"id": "simrf-test-claim", "source": "t", "statement": "s", "check": check}
    return evaluate_claim(
        make_entry("claim", raw, "simrf", "t.toml"), ResultSet(pd.DataFrame(rows)), {}
    )


def test_beating_by_a_declared_effect_needs_the_effect_beyond_two_standard_errors() -> None:
    assert _ordering({"x": (0.01, 0.001)}).verdict == ORDERING_CONFIRMED  # d − 2 se ≥ δ
    assert _ordering({"x": (0.003, 0.001)}).verdict == CONSISTENT  # d ≥ δ > d − 2 se
    assert _ordering({"x": (0.002, 0.001)}).verdict == WITHIN_NOISE  # d < δ ≤ d + 2 se
    # abalone +0.0007 ± 0.0002 (simrf-table2-beats-orf): d + 2 se < δ, the effect is absent
    res = _ordering({"x": (0.01, 0.001), "abalone": (0.0007, 0.0002)})
    assert res.verdict == DOES_NOT_HOLD and "dataset=abalone" in res.detail


def test_holm_is_the_step_down_procedure() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005 < .05/4, 0.01 < .05/3, 0.03 > .05/2: stops, the rest are kept
    assert holm(p, 0.05).tolist() == [True, False, False, True]
    assert holm(np.array([0.001, 0.02]), 0.05).tolist() == [True, True]
    assert not holm(np.array([0.3]), 0.05).any()
