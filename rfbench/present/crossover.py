"""Where a structured projection starts to beat the dense one, read from ``rfbench cost`` rows (the
cost summary and the beyond-the-papers figure both show it)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def projection_crossover(results: pd.DataFrame) -> pd.DataFrame:
    """Per coupling (``weights``), the smallest d from which the structured projection beats the
    dense one at every larger measured d (``crossover_d``, NaN if never) and the speed-up
    dense/structured at the largest d (``speedup_at_max_d``), from the ``part == "projection"`` rows
    of ``rfbench cost``.
    """
    rows = results[(results["part"] == "projection") & (results["metric"] == "time_s")]
    out = []
    for weights, group in rows.groupby("weights", sort=False):
        wide = group.pivot_table(index="d", columns="step", values="value").sort_index()
        faster = (wide["structured"] < wide["dense"]).to_numpy()
        cross = np.nan
        for i in range(len(faster) - 1, -1, -1):
            if not faster[i]:
                break
            cross = float(wide.index[i])
        top = wide.iloc[-1]
        out.append({"weights": weights, "crossover_d": cross,
                    "speedup_at_max_d": float(top["dense"] / top["structured"])})  # fmt: skip
    return pd.DataFrame(out, columns=["weights", "crossover_d", "speedup_at_max_d"])
