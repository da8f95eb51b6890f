"""The presentation of ``rfbench clusters``: the rows printed after a run."""

from __future__ import annotations

from typing import Any

import pandas as pd

from rfbench.present import reference
from rfbench.present.reference import PAPER_NAMES, paper_name
from rfbench.present.summaries import register_presentation


@register_presentation("clusters")
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Protocol ``paper`` [min, max] beside HRF Table 3 for σ = 1 (s1, s2) with an ``equal``
    flag (4-decimal rounding); without such rows, ``mse_mean`` per estimator (≤ 15 rows)."""
    sel = results[
        (results["protocol"] == "paper")
        & results["metric"].isin(["mse_min", "mse_max"])
        & (results["sigma"] == 1.0)
    ]
    if sel.empty:
        means = results[results["metric"] == "mse_mean"]
        index = ["protocol", "dataset", "m"]
        return means.pivot_table(index=index, columns="estimator", values="value").head(15)
    paper = paper_table3()
    table = sel.pivot_table(
        index=["dataset", "m"], columns=["estimator", "metric"], values="value", sort=False
    )
    rows = []
    for (dataset, m), row in table.iterrows():
        out: dict[str, Any] = {"dataset": dataset, "m": int(m)}
        equal = True
        for est in PAPER_NAMES["hrf-clusters"]:  # the paper's estimators
            ours = (round(row[(est, "mse_min")], 4), round(row[(est, "mse_max")], 4))
            ref = paper.get((dataset, int(m), est))
            equal &= ours == ref
            column = paper_name(est, "hrf-clusters")
            out[column] = f"[{ours[0]:.4f}, {ours[1]:.4f}]"
            out[f"{column} (paper)"] = f"[{ref[0]:.4f}, {ref[1]:.4f}]" if ref else ""
        out["equal"] = equal
        rows.append(out)
    return pd.DataFrame(rows)


def paper_table3() -> dict[tuple[str, int, str], tuple[float, float]]:
    """HRF Table 3 (rfbench.present.reference) as {(data set, m, estimator): (min, max)}."""
    keys = ("dataset", "m", "estimator", "aggregate")
    cells = reference.table("hrf-table3", *keys, metric="mse")
    return {
        (dataset, m, est): (entry.value, cells[dataset, m, est, "max over rep"].value)
        for (dataset, m, est, aggregate), entry in cells.items()
        if aggregate == "min over rep"
    }


def paper_s() -> dict[str, tuple[float, ...]]:
    """HRF Table 3's s-lists (App. H.3, rfbench.present.reference): data set -> s, largest first."""
    cells = reference.table("hrf-table3", "dataset", "pair_rank", metric="cluster_s")
    out: dict[str, list[tuple[int, float]]] = {}
    for (dataset, rank), entry in cells.items():
        out.setdefault(dataset, []).append((rank, entry.value))
    return {dataset: tuple(v for _, v in sorted(pairs)) for dataset, pairs in out.items()}
