"""The report's medians over heads count a non-finite head as the worst and say so (issue 44
item 7: the t2r median dropped its 4 infinite heads, 0.386 where counting them gives 0.393)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfbench.present.attention_stats import median_ci, median_ci_text


def test_a_non_finite_head_counts_as_the_worst() -> None:
    values = np.array([0.1, 0.2, 0.3, 0.4, np.inf, np.nan])
    median, low, high = median_ci(values)
    assert median == 0.35  # of six values, two of them worst; dropping them would give 0.25
    assert median_ci(np.array([1.0, np.inf, np.inf]))[0] == np.inf
    rng = np.random.default_rng(0)
    x = rng.random(72)
    x[:4] = np.inf
    m, lo, hi = median_ci(x)
    assert m == np.median(np.where(np.isfinite(x), x, 2.0))
    assert lo <= m <= hi and np.isfinite(hi)


def test_the_text_says_how_many_heads_are_non_finite() -> None:
    x = pd.Series([0.5, 0.6, np.inf, 0.7, 0.8, 0.9, 1.0, 0.4, 0.3, 0.2])
    text = median_ci_text(x)
    assert text.startswith("0.65") and "1 of 10 non-finite, counted as worst" in text
    assert "non-finite" not in median_ci_text(np.array([0.5, 0.6, 0.7]))
    assert median_ci_text(np.array([])) == "—"
