"""Gram RMSE on real data (experiment ``gram``, inputs = dataset): random features vs Nyström and
VRC's kernel estimation (docs/experiments.md#beyond-nystrom, #vrc-kernel)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from rfbench.present.plots import register_figure, style


def _curve(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows of a mean squared error ``metric`` by m, with its root as column ``rmse``."""
    sel = rows[rows["metric"] == metric].sort_values("m")
    return sel.assign(rmse=np.sqrt(sel["value"].astype(float)))


def _panels(df: pd.DataFrame) -> tuple[Figure, list[Axes], list[tuple[Axes, str, pd.DataFrame]]]:
    """One panel per data set of the Gaussian-kernel rows: the figure, its axes and for each data
    set (axis, name, rows)."""
    df = df[df["kernel"] == "gaussian"]
    datasets = list(dict.fromkeys(df["dataset"].dropna()))
    fig, axes = style.new_figure(ncols=max(1, len(datasets)), height=2.8)
    panels = zip(axes[0], datasets, strict=False)
    return fig, axes[0], [(ax, name, df[df["dataset"] == name]) for ax, name in panels]


@register_figure(
    "beyond-nystrom",
    title="Beyond the papers: Gram RMSE of random features vs Nyström and the rank-r bound",
)
def beyond_nystrom(results: dict[str, pd.DataFrame]) -> Figure:
    """One panel per data set: Gram RMSE vs m (log-log), mean ± 2 s.e. (delta method) per
    estimator, the closed form dashed (far above the sample where the draws miss a heavy tail:
    the rows' ``resolved``), the best rank-m matrix dotted grey (a bound, not an estimator)."""
    fig, axes, panels = _panels(results["beyond-nystrom"])
    # one colour and marker per estimator (trig@iid and trig@pnc share a family colour)
    looks = style.assign(list(dict.fromkeys(results["beyond-nystrom"]["estimator"])))
    for ax, name, rows in panels:
        for est, part in rows.groupby("estimator", sort=False):
            emp = _curve(part, "frob_sq_per_entry")
            se = emp["stderr"].astype(float).fillna(0.0) / (2 * emp["rmse"])
            colour, mark = looks[est]
            ax.errorbar(emp["m"], emp["rmse"], yerr=2 * se, color=colour, marker=mark,
                        label=est, capsize=2)  # fmt: skip
            theory = _curve(part, "theory_frob_sq_per_entry")
            if len(theory):
                ax.plot(theory["m"], theory["rmse"], color=colour, linestyle="--", linewidth=0.8,
                        label="closed form (dashed, the estimator's colour)")  # fmt: skip
        bound = _curve(rows, "oracle_frob_sq_per_entry")
        bound = bound[bound["features"] == bound["m"]].groupby("m")["rmse"].min()
        bound = bound[bound > 0]  # rank ≥ n: the bound is exact, 0, off a log axis
        if len(bound):
            ax.plot(bound.index, bound.values, color="0.5", linestyle=":", linewidth=1.5,
                    label="best rank-m matrix (bound)", zorder=0)  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        d, n = int(rows["d"].iloc[0]), int(rows["n_points"].iloc[0])
        ax.set(xlabel="projections / landmarks m", ylabel="Gram RMSE")
        ax.set_title(f"{name} (d = {d}, n = {n})")
    if panels:  # one legend of what any panel draws, each entry once
        drawn = style.legend_entries(axes)
        axes[-1].legend(list(drawn.values()), list(drawn), fontsize=6, loc="upper left",
                        bbox_to_anchor=(1.02, 1.0))  # fmt: skip
    return fig


@register_figure(
    "vrc-kernel",
    title="VRC Table 1 setting: Gram RMSE with m = d, PNC vs iid/ORF, Nyström and the rank-r bound",
)
def vrc_kernel(results: dict[str, pd.DataFrame]) -> Figure:
    """One panel per data set: Gram RMSE per estimator at m = d (log y), mean ± 2 s.e. (delta
    method), the closed form as an open marker, the best rank-r matrix as a grey bar (a bound)."""
    fig, axes, panels = _panels(results["vrc-kernel"])
    for ax, name, rows in panels:
        names = list(dict.fromkeys(rows["estimator"]))
        emp = rows[rows["metric"] == "frob_sq_per_entry"].set_index("estimator")
        theory, oracle = (
            _curve(rows, metric).set_index("estimator")["rmse"]
            for metric in ("theory_frob_sq_per_entry", "oracle_frob_sq_per_entry")
        )
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
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
        ax.set_yscale("log")
        d, n = int(rows["d"].iloc[0]), int(rows["n_points"].iloc[0])
        ax.set_title(f"{name} (d = m = {d}, n = {n})", fontsize=8)
        ax.set_ylabel("Gram RMSE")
    if panels:
        axes[0].legend(fontsize=6, loc="lower left")
    return fig
