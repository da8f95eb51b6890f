"""VRC kernel estimation (experiment ``gram``, inputs = dataset; docs/experiments.md#vrc-kernel)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rfbench.present.plots import style
from rfbench.present.plots.registry import register_figure


def _rmse(rows: pd.DataFrame, metric: str) -> pd.Series:
    """RMSE per estimator from mean squared error rows (and its delta-method standard error)."""
    sel = rows[rows["metric"] == metric].set_index("estimator")
    return np.sqrt(sel["value"].astype(float))


@register_figure(
    "vrc-kernel",
    title="VRC Table 1 setting: Gram RMSE with m = d, PNC vs iid/ORF, Nyström and the rank-r bound",
)
def vrc_kernel(results: dict[str, pd.DataFrame]) -> Figure:
    """One panel per data set: Gram RMSE per estimator at m = d (log y), mean ± 2 s.e. (delta
    method), the closed form as an open marker, the best rank-r matrix as a grey bar (a bound)."""
    df = results["vrc-kernel"]
    df = df[df["kernel"] == "gaussian"]
    datasets = list(dict.fromkeys(df["dataset"].dropna()))
    fig, axes = style.new_figure(ncols=max(1, len(datasets)), height=2.8)
    for ax, name in zip(axes[0], datasets, strict=False):
        rows = df[df["dataset"] == name]
        names = list(dict.fromkeys(rows["estimator"]))
        emp = rows[rows["metric"] == "frob_sq_per_entry"].set_index("estimator")
        theory = _rmse(rows, "theory_frob_sq_per_entry")
        oracle = _rmse(rows, "oracle_frob_sq_per_entry")
        x = np.arange(len(names))
        for i, est in enumerate(names):
            if est in oracle.index:
                ax.bar(i, oracle[est], width=0.7, color="0.85", zorder=0,
                       label="best rank-r (bound)" if i == 0 else None)  # fmt: skip
            if est not in emp.index:
                continue
            mse, se = float(emp.loc[est, "value"]), float(emp.loc[est, "stderr"] or 0.0)
            rmse = np.sqrt(mse)
            err = se / (2 * rmse) if rmse > 0 else 0.0  # delta method: se(√MSE) = se(MSE)/(2√MSE)
            ax.errorbar(i, rmse, yerr=2 * err, fmt=style.marker(est), color=style.colour(est),
                        capsize=2, zorder=3)  # fmt: skip
            if est in theory.index:
                ax.plot(i, theory[est], marker="o", mfc="none", mec="k", ms=7, zorder=4,
                        label="closed form" if "closed form" not in
                        ax.get_legend_handles_labels()[1] else None)  # fmt: skip
        ax.set_xticks(x, names, rotation=45, ha="right", fontsize=7)
        ax.set_yscale("log")
        d = int(rows["d"].iloc[0]) if len(rows) else 0
        ax.set_title(f"{name} (d = m = {d}, n = {int(rows['n_points'].iloc[0])})", fontsize=8)
        ax.set_ylabel("Gram RMSE")
    if datasets:
        axes[0][0].legend(fontsize=6, loc="lower left")
    return fig
