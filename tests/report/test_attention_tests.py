"""The real-attention statistics (issue 40.3): Student t(n − 1) p-values for a mean of n draws,
deterministic methods as point comparisons, the swap-in's in-sample fits said, and the paired
median ratio to uniform attention deciding whether the finding holds in full or in part."""

from __future__ import annotations

import numpy as np
import pandas as pd
from attention_runs import run_rows
from scipy import stats

from rfbench.present.attention_stats import (
    RUNS,
    beats_text,
    beats_uniform_tests,
    is_deterministic,
)
from rfbench.present.report.beyond_attention import attention_part
from rfbench.present.report.beyond_models import HOLDS, MOST, PARTLY, models_part, verdict


def _heads(z: np.ndarray, n: int = 10, se: float = 0.01, est: str = "a") -> pd.DataFrame:
    return pd.DataFrame({"estimator": est, "budget": 16, "tokens": 512, "z_uniform": z,
                         "n_trials": n, "value": 0.8, "stderr": se})  # fmt: skip


def test_a_mean_of_ten_draws_is_tested_against_t9_not_the_normal() -> None:
    # z = 2.2: the normal tail (0.014) is below α = Φ(−2) ≈ 0.023, t(9)'s (0.028) is not
    alpha = stats.norm.sf(2.0)
    assert stats.norm.sf(2.2) < alpha < stats.t.sf(2.2, 9)
    tests = beats_uniform_tests(_heads(np.array([2.2])))
    assert not tests["raw"].iloc[0] and not tests["corrected"].iloc[0]
    # with many draws t(n − 1) is the normal: the same z rejects
    assert beats_uniform_tests(_heads(np.array([2.2]), n=10_000))["raw"].iloc[0]


def test_the_holm_share_uses_the_t_p_values() -> None:
    z = np.linspace(2.0, 4.5, 12)
    got = beats_uniform_tests(_heads(z))["corrected"].to_numpy()
    p, alpha = stats.t.sf(z, 9), stats.norm.sf(2.0)
    order, expected = np.argsort(p), np.zeros(z.size, bool)
    for rank, i in enumerate(order):
        if p[i] >= alpha / (z.size - rank):
            break
        expected[i] = True
    assert (got == expected).all()
    assert got.sum() < (stats.norm.sf(z) < alpha / np.arange(z.size, 0, -1)).sum() + 1


def test_deterministic_rows_are_point_comparisons_outside_the_family() -> None:
    # a window's draws agree to round-off (se ~ 1e-16 of its value): no test, only its sign
    point = _heads(np.array([4e14, -3e14]), se=1e-16, est="w")
    assert is_deterministic(point).all()
    tests = beats_uniform_tests(point)
    assert tests["point"].all() and list(tests["corrected"]) == [True, False]
    assert beats_text(point) == "50% of 2, point comparison"
    # a mixed part: the tested rows' Holm family does not grow by the deterministic ones
    sampled = _heads(np.array([3.0, 2.9, 2.8]))
    both = pd.concat([sampled, point.assign(estimator="a")], ignore_index=True)
    alone = beats_uniform_tests(sampled)["corrected"].to_numpy()
    assert (beats_uniform_tests(both)["corrected"].to_numpy()[:3] == alone).all()
    assert "(2 by point comparison)" in beats_text(both)


def test_the_finding_holds_only_in_part_where_the_median_head_gains() -> None:
    rng = np.random.default_rng(0)
    gain = 0.93 + 0.01 * rng.standard_normal(36)  # every head ≈ 7 % better: interval below 1
    assert verdict(0.2, gain).startswith(PARTLY) and "7%" in verdict(0.2, gain)
    level = 1.0 + 0.05 * rng.standard_normal(36)  # the interval reaches 1
    assert verdict(0.2, level) == HOLDS
    assert verdict(MOST, level) == "does not hold"


def test_the_models_table_prints_the_ratio_beside_the_share_and_counts_partly_apart() -> None:
    frames = {name: run_rows(model=f"m{i}", seed=i) for i, name in enumerate(RUNS)}
    # every map 2 % below uniform, within about 2 se on each head: few heads reject alone
    frames[next(iter(RUNS))] = run_rows(model="gains", gain=0.016)
    text = "\n".join(models_part(frames))
    assert "It holds on 3 of the 4 runs in these results and in part on 1" in text
    header = next(line for line in text.splitlines() if line.startswith("| model |"))
    cells = [c.strip() for c in header.split("|")]
    share = cells.index("best map beats uniform, Holm")
    assert cells[share + 1] == "vs uniform (paired median ratio)"
    row = next(line for line in text.splitlines() if line.startswith("| gains |"))
    assert f"| {PARTLY}" in row


def _swap(fit_text: str | None) -> pd.DataFrame:
    rows = []
    for est, value, se in (("uniform", 0.5, None), ("nystrom", 0.9, 0.004)):
        rows.append({"kind": "swap", "estimator": est, "metric": "swap_cosine", "value": value,
                     "stderr": se, "n_trials": 6, "budget": None if est == "uniform" else 64,
                     "tokens": 64, "fit_text": fit_text, "text": fit_text and "held"})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_swap_in_column_says_where_its_fits_were_made() -> None:
    heads = run_rows()
    heads = heads.assign(fit_text="fitting", text="measured")
    inside = "\n".join(attention_part(pd.concat([heads, _swap(None)], ignore_index=True)))
    assert "its column is in-sample, not held out" in inside
    assert "The swap-in runs at 64 tokens" in inside
    held = "\n".join(attention_part(pd.concat([heads, _swap("fitting")], ignore_index=True)))
    assert "in-sample" not in held and "fits on the fitting text" in held
