"""The report's real-data parts quote the results they read (attention heads, Nyström)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rfbench.present.report.beyond_attention import attention_part, nystrom_part

ROOT = Path(__file__).resolve().parents[2]


def test_attention_part_quotes_the_median_over_heads_and_the_share_beating_uniform() -> None:
    df = pd.read_parquet(ROOT / "results" / "attention" / "beyond-attention.parquet")
    text = "\n".join(attention_part(df))
    heads = df[(df["kind"] == "heads") & (df["metric"] == "out_rel_frob")]
    heads = heads[(heads["tokens"] == heads["tokens"].max()) & (heads["m"] == heads["m"].max())]
    part = heads[heads["estimator"] == "hyperbolic@orf"]
    share = part["beats_uniform"].dropna().astype(bool).mean()
    row = next(line for line in text.splitlines() if line.startswith("| `hyperbolic@orf`"))
    assert f"{np.median(part['value']):.3g}" in row and f"{share:.0%} of" in row


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
