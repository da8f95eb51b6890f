"""Issue 42 item 2: the report's tests read the anytime-valid intervals of sequentially drawn rows
(``stop`` resolved or cap): a z from value ± stderr read at a data-dependent stopping time is not
a valid test (docs/architecture.md#sequential-draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfbench.present.attention_stats import beats_uniform_tests
from rfbench.present.reference.loader import make_entry
from rfbench.present.report.claims import evaluate_claim
from rfbench.present.report.rows import ResultSet, pick
from rfbench.present.report.verdicts import CONSISTENT, DOES_NOT_HOLD, ORDERING_CONFIRMED


def _claim(check: dict) -> object:
    raw = {"id": "derf-test-claim", "source": "test", "statement": "a claim", "check": check}
    return make_entry("claim", raw, "derf", "test.toml")


BEST = {"kind": "count", "experiment": "classify", "metric": "accuracy", "estimator": "a",
        "best": "max", "for_each": ["dataset"], "at_least_fraction": 1.0}  # fmt: skip


def _rows(values: dict[str, list[float]], diffs: list[tuple[float, float]] | None, stop: str):
    """Classify-like rows over two data sets; ``b`` carries the interval of a − b."""
    out = []
    for est, vals in values.items():
        for i, v in enumerate(vals):
            row = {"experiment": "classify", "figure": "f", "estimator": est, "metric": "accuracy",
                   "value": v, "stderr": 0.01, "n_trials": 200, "dataset": f"d{i}"}  # fmt: skip
            if diffs is not None:
                row.update(stop=stop, cs_low=v - 0.05, cs_high=v + 0.05)
                if est == "b":
                    excludes_zero = diffs[i][0] > 0 or diffs[i][1] < 0
                    row.update(versus="a", diff_low=diffs[i][0], diff_high=diffs[i][1],
                               p_anytime=0.01 if excludes_zero else 0.5)  # fmt: skip
            out.append(row)
    return pd.DataFrame(out)


def test_a_sequential_rows_interval_decides_not_its_z() -> None:
    values = {"a": [0.90, 0.85], "b": [0.80, 0.80]}  # z = 7 and 3.5 on value ± stderr
    assert (
        evaluate_claim(_claim(BEST), ResultSet(_rows(values, None, "")), {}).verdict
        == ORDERING_CONFIRMED
    )
    # drawn sequentially, stopped early: the anytime-valid interval of a − b includes 0 on d1
    rows = _rows(values, [(0.02, 0.18), (-0.01, 0.11)], "resolved")
    res = evaluate_claim(_claim(BEST), ResultSet(rows), {})
    assert res.verdict == CONSISTENT, res.detail
    # unresolved at the cap (every draw taken): read as with fixed draws
    rows = _rows(values, [(0.02, 0.18), (-0.01, 0.11)], "cap")
    assert evaluate_claim(_claim(BEST), ResultSet(rows), {}).verdict == ORDERING_CONFIRMED
    # both intervals above zero: confirmed; one wholly below: does not hold
    rows = _rows(values, [(0.02, 0.18), (0.01, 0.09)], "resolved")
    assert evaluate_claim(_claim(BEST), ResultSet(rows), {}).verdict == ORDERING_CONFIRMED
    rows = _rows({"a": [0.90, 0.79], "b": [0.80, 0.80]}, [(0.02, 0.18), (-0.03, -0.001)], "cap")
    assert evaluate_claim(_claim(BEST), ResultSet(rows), {}).verdict == DOES_NOT_HOLD


def _family(n: int, p_wrong: float) -> pd.DataFrame:
    """n data sets drawn sequentially: ``a`` resolved best on all but d0, where b's interval says
    a − b < 0 at anytime p-value ``p_wrong``."""
    values = {"a": [0.79] + [0.90] * (n - 1), "b": [0.80] * n}
    rows = _rows(values, [(-0.03, -0.001)] + [(0.02, 0.18)] * (n - 1), "resolved")
    rows.loc[(rows["estimator"] == "b") & (rows["dataset"] == "d0"), "p_anytime"] = p_wrong
    rows.loc[(rows["estimator"] == "b") & (rows["dataset"] != "d0"), "p_anytime"] = 1e-4
    return rows


def test_a_failure_must_survive_holm_over_the_claims_comparisons() -> None:
    # p = 0.011 fails alone at α = 0.05, but not among 32 comparisons (0.05/32 = 0.0016)
    alone = evaluate_claim(_claim(BEST), ResultSet(_family(1, 0.011)), {})
    assert alone.verdict == DOES_NOT_HOLD, alone.detail
    many = evaluate_claim(_claim(BEST), ResultSet(_family(32, 0.011)), {})
    assert many.verdict != DOES_NOT_HOLD, many.detail
    assert "not significant after Holm over the claim's 32 comparisons" in many.detail
    # a failure far beyond the family's threshold still fails
    strong = evaluate_claim(_claim(BEST), ResultSet(_family(32, 1e-4)), {})
    assert strong.verdict == DOES_NOT_HOLD, strong.detail


def test_a_fixed_draw_failure_must_survive_holm_too() -> None:
    # b beats a by 2.5 combined standard errors on d0 (two-sided p 0.012 < 0.0455 alone), a
    # clearly best elsewhere
    def rows(n: int) -> pd.DataFrame:
        bad = 0.80 - 2.5 * 0.01 * np.sqrt(2)
        return _rows({"a": [bad] + [0.90] * (n - 1), "b": [0.80] * n}, None, "")

    assert evaluate_claim(_claim(BEST), ResultSet(rows(1)), {}).verdict == DOES_NOT_HOLD
    assert evaluate_claim(_claim(BEST), ResultSet(rows(32)), {}).verdict != DOES_NOT_HOLD


def test_the_mean_over_data_sets_of_sequential_rows_is_one_row_per_estimator() -> None:
    # the stop and interval columns measure a row; they do not split an aggregate by data set
    check = {**BEST, "aggregate": "mean over dataset", "for_each": []}
    values = {"a": [0.90, 0.70], "b": [0.80, 0.78]}  # a better on average (0.80 vs 0.79)
    plain = evaluate_claim(_claim(check), ResultSet(_rows(values, None, "")), {})
    rows = _rows(values, [(0.05, 0.15), (-0.12, -0.04)], "resolved")
    seq = evaluate_claim(_claim(check), ResultSet(rows), {})
    assert seq.verdict == plain.verdict == CONSISTENT
    assert "1 of 1" in seq.detail, seq.detail


def test_attention_heads_resolved_early_are_tested_by_their_anytime_p_value() -> None:
    # three draws, z = 3: Student's t(2) gives p ≈ 0.048 > Φ(−2), but the head's sequence was
    # resolved (its anytime p-value 0.004): it beats uniform attention; at the cap, today's test
    rows = pd.DataFrame({
        "estimator": ["m"] * 4, "budget": [16] * 4, "tokens": [32] * 4,
        "value": [0.5, 0.5, 0.5, 0.5], "stderr": [0.05] * 4, "n_trials": [3, 3, 10, 10],
        "z_uniform": [3.0, 3.0, 3.0, 1.0],
        "stop": ["resolved", "resolved", "cap", "cap"], "p_anytime": [0.004, 0.004, 0.5, 0.5],
        "diff_low": [0.01, 0.01, -0.1, -0.2], "diff_high": [0.3, 0.3, 0.4, 0.3],
    })  # fmt: skip
    tests = beats_uniform_tests(rows)
    assert tests["raw"].tolist() == [True, True, True, False]
    # Holm over the 4 heads at Φ(−2) ≈ 0.0228: 0.002, 0.002 (the one-sided anytime p) pass
    assert tests["corrected"].tolist()[:2] == [True, True]
    fixed = rows.drop(columns=["stop", "p_anytime", "diff_low", "diff_high"])
    assert not beats_uniform_tests(fixed)["raw"].iloc[0]  # today's t(2) test at the same z
    assert np.isclose(0.004 / 2, 0.002)


def test_a_row_stopped_early_is_read_with_its_anytime_width() -> None:
    # a row's own z at a data-dependent stopping time is not a test: a resolved row's stderr is
    # its anytime interval's half-width over 1.96; a row at the cap (every draw) keeps its own
    rows = pd.DataFrame({
        "estimator": ["a", "b", "c"], "metric": ["accuracy"] * 3, "value": [0.8, 0.8, 0.8],
        "stderr": [0.01, 0.01, 0.2], "stop": ["resolved", "cap", "resolved"],
        "cs_low": [0.7, 0.7, 0.7], "cs_high": [0.9, 0.9, 0.9],
    })  # fmt: skip
    picked = pick(rows, {"metric": "accuracy"})
    assert np.allclose(picked.rows["stderr"], [0.1 / 1.959963984540054, 0.01, 0.2])
    plain_rows = rows.drop(columns=["stop"])
    assert pick(plain_rows, {"metric": "accuracy"}).rows["stderr"].tolist() == [0.01, 0.01, 0.2]
