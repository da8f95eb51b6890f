"""The presentation of ``rfbench variance``: the rows printed after a run."""

from __future__ import annotations

from typing import Any

import pandas as pd

from rfbench.compute.schema import VARIANCE_METRICS
from rfbench.present.summaries import register_presentation


@register_presentation("variance")
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per regime: GERF − SDERF and GERF − ADERF gaps (nats) at σ = 0.5 and the largest σ,
    next to the paper's claims (DERF Sec. 5.1, Figs. 1-2; docs/experiments.md#derf-fig2: ≈ e^5
    heterogen/mnist/mnist-cifar10, ≈ e^10 cifar10 for SDERF; ≈ e^3 for ADERF on
    mnist/cifar10)."""
    main = results[results["metric"].isin(VARIANCE_METRICS.values())]
    if main.empty:
        return results.head(12)
    table = main.pivot_table(index=["regime", "sigma"], columns="mechanism", values="value")
    out = []
    for regime in dict.fromkeys(main["regime"]):
        sub = table.loc[regime]
        row: dict[str, Any] = {"regime": regime}
        for sigma in sorted({min(sub.index, key=lambda s: abs(s - 0.5)), max(sub.index)}):
            vals = sub.loc[sigma]
            for a, b in (("gerf", "sderf"), ("gerf", "aderf")):
                if a in vals and b in vals:
                    row[f"{a}−{b} σ={sigma:g}"] = round(float(vals[a] - vals[b]), 2)
            if "sderf" in vals:
                row[f"sderf σ={sigma:g}"] = round(float(vals["sderf"]), 2)
        row["paper"] = CLAIMS.get(regime, "")
        out.append(row)
    return pd.DataFrame(out)


CLAIMS = {
    "normal": "SDERF ≤ others (on par)",
    "sphere": "SDERF ≤ others (on par)",
    "heterogen": "SDERF ≈ e^5 below GERF",
    "mnist": "SDERF ≈ e^5 below GERF",
    "cifar10": "SDERF ≈ e^10 below GERF",
    "mnist/cifar10": "SDERF ≈ e^5, ADERF ≈ e^3 below GERF",
}
