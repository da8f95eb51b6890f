"""Claims compare estimators at equal feature count: TrigRF's m projections are 2m features.

DERF Fig. 3's claims re-aggregated independently from the committed result file (pandas only,
feature counts from the estimators' own widths) agree with the report's checks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from rfbench.compute.results import load_results
from rfbench.compute.runner.columns import feature_counts

RESULTS = Path(__file__).resolve().parents[2] / "results"
FIG3 = RESULTS / "classify" / "derf-fig3.parquet"


def test_feature_count_is_m_times_the_width() -> None:
    rows = pd.DataFrame({"estimator": ["trig@orf", "positive@orf", "exact"], "m": [8, 16, None]})
    assert feature_counts(rows).tolist()[:2] == [16, 16]
    assert feature_counts(rows).isna().tolist() == [False, False, True]


@pytest.mark.slow
@pytest.mark.skipif(not FIG3.is_file(), reason="committed DERF Fig. 3 results absent")
def test_derf_fig3_claims_are_judged_at_equal_features(committed_report) -> None:  # type: ignore[no-untyped-def]
    acc = load_results(FIG3).query("metric == 'accuracy' and estimator != 'exact'").copy()
    width = {"trig@orf": 2}
    acc["M"] = acc["m"].astype(int) * acc["estimator"].map(lambda e: width.get(e, 1))
    best = acc.loc[acc.groupby(["dataset", "M"])["value"].idxmax()]
    wins, pairs = int((best["estimator"] == "sderf@orf").sum()), len(best)
    means = acc.groupby(["M", "estimator"])["value"].mean().unstack()
    best_mean = (means.idxmax(axis=1) == "sderf@orf").sum()

    claims = {c.entry.id: c for c in committed_report.claims}
    most = claims["derf-fig3-sderf-best-most-pairs"]
    text = " ".join(str(v) for v in vars(most).values())
    assert f"{wins} of {pairs} comparisons hold" in text and (wins, pairs) == (19, 32)
    average = claims["derf-fig3-sderf-best-average"]
    text = " ".join(str(v) for v in vars(average).values())
    assert re.search(rf"{best_mean} of 4 comparisons hold", text) and best_mean == 3
    assert "features=16: sderf@orf 0.5078 vs trig@orf 0.5129" in text
