"""Random features vs Nyström on real data (experiment ``gram``, inputs = dataset;
docs/experiments.md#beyond-nystrom)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rfbench.present.plots import style
from rfbench.present.plots.registry import register_figure


def _curve(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    sel = rows[rows["metric"] == metric].sort_values("m")
    return sel.assign(rmse=np.sqrt(sel["value"].astype(float)))


@register_figure(
    "beyond-nystrom",
    title="Beyond the papers: Gram RMSE of random features vs Nyström and the rank-r bound",
)
def beyond_nystrom(results: dict[str, pd.DataFrame]) -> Figure:
    """One panel per data set: Gram RMSE vs m (log-log), mean ± 2 s.e. (delta method) per
    estimator, the closed form dashed (far above the sample where the draws miss a heavy tail:
    the rows' ``resolved``), the best rank-m matrix dotted grey (a bound, not an estimator)."""
    df = results["beyond-nystrom"]
    df = df[df["kernel"] == "gaussian"]
    datasets = list(dict.fromkeys(df["dataset"].dropna()))
    fig, axes = style.new_figure(ncols=max(1, len(datasets)), height=2.8)
    for ax, name in zip(axes[0], datasets, strict=False):
        rows = df[df["dataset"] == name]
        for est, part in rows.groupby("estimator", sort=False):
            emp = _curve(part, "frob_sq_per_entry")
            se = emp["stderr"].astype(float).fillna(0.0) / (2 * emp["rmse"])
            colour = style.colour(est)
            ax.errorbar(emp["m"], emp["rmse"], yerr=2 * se, color=colour, marker=style.marker(est),
                        label=est, capsize=2)  # fmt: skip
            theory = _curve(part, "theory_frob_sq_per_entry")
            if len(theory):
                ax.plot(theory["m"], theory["rmse"], color=colour, linestyle="--", linewidth=0.8)
        bound = _curve(rows, "oracle_frob_sq_per_entry")
        bound = bound[bound["features"] == bound["m"]].groupby("m")["rmse"].min()
        bound = bound[bound > 0]  # rank ≥ n: the bound is exact, 0, off a log axis
        if len(bound):
            ax.plot(bound.index, bound.values, color="0.5", linestyle=":", linewidth=1.5,
                    label="best rank-m matrix (bound)", zorder=0)  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        d = int(rows["d"].iloc[0]) if len(rows) else 0
        ax.set(xlabel="projections / landmarks m", ylabel="Gram RMSE",
               title=f"{name} (d = {d}, n = {int(rows['n_points'].iloc[0])})")  # fmt: skip
    if datasets:
        axes[0][-1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig
