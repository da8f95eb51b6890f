"""Bookkeeping of the verdicts (issue 40.5): a median over the few finite draws is not shown as an
error, values computed on replayed data are counted as replayed, one run is counted once,
computed values carry a standard error of 0, a rejection at the Holm threshold says so, "on par"
is one tolerance in nats, and a weaker reading does not make a claim depend on the reading."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.experiments.theory.experiment import simrf_fig4
from rfbench.present import reference
from rfbench.present.report.beyond import _error_split
from rfbench.present.report.numbers import family_wise
from rfbench.present.report.verdicts import (
    DEPENDS,
    DIFFERS,
    DOES_NOT_HOLD,
    ORDERING_CONFIRMED,
    REPLAYED,
    VERIFIED,
    ClaimResult,
    depends_on_reading,
)


def _precision(nonfinite: float) -> pd.DataFrame:
    rows = []
    for dtype in ("float64", "float16"):
        for metric, value in (
            ("dtype_to_mc", 1e-15),
            ("dtype_to_mc_same_form", 0.025),
            ("nonfinite_fraction", nonfinite if dtype == "float16" else 0.0),
        ):
            rows.append({"estimator": "sderf@iid", "r": 5.0, "theta": 0.0, "dtype": dtype,
                         "form": "naive", "metric": metric, "value": value})  # fmt: skip
    return pd.DataFrame(rows)


def test_a_cell_of_mostly_non_finite_draws_shows_their_share_not_a_median() -> None:
    text = "\n".join(_error_split(_precision(0.998), ["sderf"], 5.0))
    assert "— (99.8% not finite)" in text and "0.025" not in text
    some = "\n".join(_error_split(_precision(0.002), ["sderf"], 5.0))
    assert "0.025 (0.2% not finite)" in some
    assert "0.025 |" in "\n".join(_error_split(_precision(0.0), ["sderf"], 5.0))


def test_s_values_of_the_replayed_clusters_are_replayed(committed_report) -> None:  # type: ignore[no-untyped-def]
    rows = [r for r in committed_report.numbers if "-s-value-" in r.entry.id]
    assert len(rows) == 16 and {r.verdict for r in rows} == {REPLAYED}


def test_cluster_claims_count_hrf_table3_once(committed_report) -> None:  # type: ignore[no-untyped-def]
    """hrf-table3's rows equal hrf-fig6's paper protocol: each cell is judged once."""
    ids = ("hrf-fig6-cluster-hybrid-best-mean", "hrf-table3-cluster-hybrid-smallest-min-max",
           "hrf-table3-favor-worst")  # fmt: skip
    fig6 = pd.read_parquet(committed_report.results_dir / "clusters" / "hrf-fig6.parquet")
    fig6 = fig6[fig6["metric"] == "mse"]
    groups = len(fig6[["protocol", "dataset", "m"]].drop_duplicates())
    for r in (r for r in committed_report.claims if r.entry.id in ids):
        # the cells a sample does not resolve are left out and counted in the detail
        left = re.search(r"(\d+) more comparison\(s\) left out", r.detail)
        judged = groups - (int(left[1]) if left else 0)
        assert f"of {judged} comparisons hold" in r.detail
        assert "figure=hrf-table3" not in r.detail


def test_computed_conformities_carry_standard_error_zero(committed_report) -> None:  # type: ignore[no-untyped-def]
    spec = {"conformity_d": 6, "conformity_v": 1.0, "conformity_iid_couplings": 20,
            "conformity_passes": 2, "rep": 0}  # fmt: skip
    rows = [r for r in simrf_fig4(spec, np.random.default_rng(0)) if r["metric"] == "rf_conformity"]
    for r in rows:
        if r["weights"] == "iid":
            assert r["stderr"] > 0
        else:
            assert r["stderr"] == 0.0
    by_id = {r.entry.id: r for r in committed_report.claims}
    assert by_id["simrf-fig4-conformity-ordering"].verdict == ORDERING_CONFIRMED


def test_a_rejection_at_the_holm_threshold_says_so(committed_report) -> None:  # type: ignore[no-untyped-def]
    numbers = committed_report.numbers
    n, _, cutoff = family_wise(numbers)
    chess = next(r for r in numbers if r.entry.id == "simrf-table2-chess-simrf")
    assert chess.verdict == DIFFERS
    zs = sorted(
        (abs(r.z) for r in numbers if r.in_family and not r.entry.reading_of
         and not r.entry.second_of), reverse=True,
    )  # fmt: skip
    rank = zs.index(abs(chess.z)) + 1
    critical = NormalDist().inv_cdf(1 - 0.05 / (2 * (n - rank + 1)))
    assert abs(chess.z) < 1.05 * critical  # at the threshold: the row must say so
    assert f"at the Holm threshold: rank {rank} of {n}" in chess.detail
    assert f"against {critical:.3f}" in chess.detail
    seconds = sum(1 for r in numbers if r.in_family and r.entry.second_of)
    assert f"with the {seconds} second comparisons (released code)" in chess.detail
    far = max((r for r in numbers if r.verdict == DIFFERS), key=lambda r: abs(r.z))
    assert "Holm threshold" not in far.detail and abs(far.z) >= cutoff


def test_on_par_is_one_tolerance_in_nats() -> None:
    check = reference.get("derf-fig2-sderf-best-or-on-par").check
    assert "range_tol" not in check
    assert check["abs_tol"] == pytest.approx(math.log(2))


def _claim(verdict: str, **fields: object) -> ClaimResult:
    base = reference.get("hrf-fig2-gaussian-hybrid-similar")
    return ClaimResult(replace(base, **fields), verdict, "")  # type: ignore[arg-type]


def test_a_weaker_reading_shows_but_does_not_decide(committed_report) -> None:  # type: ignore[no-untyped-def]
    primary = _claim(DOES_NOT_HOLD)
    weaker = _claim(VERIFIED, id="hrf-w", reading_of=primary.entry.id, reading="direction",
                    weaker=True)  # fmt: skip
    deciding = _claim(VERIFIED, id="hrf-d", reading_of=primary.entry.id, reading="direction")
    assert depends_on_reading([primary], [primary, weaker], [])[0].verdict == DOES_NOT_HOLD
    assert depends_on_reading([primary], [primary, deciding], [])[0].verdict == DEPENDS
    by_id = {r.entry.id: r for r in committed_report.claims}
    assert by_id["hrf-fig2-gaussian-hybrid-similar"].verdict == DOES_NOT_HOLD
