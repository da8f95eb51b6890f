"""The report's real-data parts quote the results they read (attention heads, Nyström)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rfbench.present.report.beyond_attention import attention_part, nystrom_part

ROOT = Path(__file__).resolve().parents[2]


def attention_rows(shift: float = 0.0) -> pd.DataFrame:
    """Two methods on 12 heads at one budget, uniform baselines and swap-in scores."""
    rng = np.random.default_rng(0)
    rows = []
    for h in range(12):
        for est, level, width in (("positive@iid", 0.7, 64), ("window", 0.4, 64)):
            value = level + shift + 0.05 * rng.standard_normal()
            rows.append({"kind": "heads", "estimator": est, "metric": "out_rel_frob",
                         "value": value, "stderr": 0.02, "n_trials": 10, "tokens": 512,
                         "layer": h // 4, "head": h % 4, "budget": 64, "features": width,
                         "z_uniform": (0.8 - value) / 0.02})  # fmt: skip
        rows.append({"kind": "baselines", "estimator": "uniform", "metric": "out_rel_frob",
                     "value": 0.8, "tokens": 512, "layer": h // 4, "head": h % 4})  # fmt: skip
    for est, cos, se in (("uniform", 0.5, None), ("positive@iid", 0.65, 0.01)):
        rows.append({"kind": "swap", "estimator": est, "metric": "swap_cosine", "value": cos,
                     "stderr": se, "n_trials": 6, "budget": 64})  # fmt: skip
    df = pd.DataFrame(rows)
    df["beats_uniform"] = df["z_uniform"] > 2
    return df


def test_attention_part_quotes_medians_intervals_holm_shares_and_the_swap_gap() -> None:
    from rfbench.present.attention_stats import beats_uniform_corrected, median_ci

    df = attention_rows()
    text = "\n".join(attention_part(df))
    for est in ("positive@iid", "window"):
        part = df[(df["estimator"] == est) & (df["kind"] == "heads")]
        median, low, high = median_ci(part["value"].to_numpy())
        share = beats_uniform_corrected(part).mean()
        row = next(line for line in text.splitlines() if line.startswith(f"| `{est}`"))
        assert f"{median:.3g} [{low:.3g}, {high:.3g}]" in row and f"{share:.0%} (" in row
    row = next(line for line in text.splitlines() if line.startswith("| `positive@iid`"))
    assert "0.65 ± 0.01 (gap 0.3 ± 0.02)" in row  # (0.65 − 0.5)/(1 − 0.5), SE 0.01/0.5
    assert "oracles aside: `window`" in text and "64 features" in text
    moved = "\n".join(attention_part(attention_rows(shift=0.1)))
    assert moved != text  # numbers are read from the rows


def test_attention_part_without_swap_rows_has_no_swap_column() -> None:
    df = attention_rows()
    text = "\n".join(attention_part(df[df["kind"] != "swap"]))
    assert "swap-in cosine" not in text and "No swap-in score in this run" in text
    header = next(line for line in text.splitlines() if line.startswith("| method"))
    row = next(line for line in text.splitlines() if line.startswith("| `window`"))
    assert header.count("|") == row.count("|") == 6


def test_nystrom_part_changes_with_the_results() -> None:
    rows = [
        {"dataset": "toy", "d": 4, "m": 4, "estimator": est, "metric": metric, "value": value,
         "stderr": 0.0, "features": 4, "resolved": True}
        for est, metric, value in [
            ("trig@iid", "frob_sq_per_entry", 0.04),
            ("nystrom", "frob_sq_per_entry", 0.0001),
            ("nystrom", "oracle_frob_sq_per_entry", 1e-6),
        ]
    ]  # fmt: skip
    text = "\n".join(nystrom_part(pd.DataFrame(rows)))
    assert "`trig@iid` 0.2" in text and "`nystrom` 0.01" in text and "| 0.001 |" in text
    rows[0]["value"] = 0.09
    assert "`trig@iid` 0.3" in "\n".join(nystrom_part(pd.DataFrame(rows)))
