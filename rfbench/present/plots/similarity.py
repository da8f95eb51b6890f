"""Does it matter downstream? Each encoder's agreement with human document similarity after the
swap, per method (experiment ``similarity``; docs/experiments.md#similarity)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from rfbench.present.plots import register_figure, style

NAME = "beyond-similarity"
ENDS = ("exact", "uniform")


def _spearman(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["metric"] == "human_spearman"]


def method_order(df: pd.DataFrame) -> list[str]:
    """The methods (not the two ends), by their Spearman on the first model, best first."""
    rows = _spearman(df)
    first = rows[rows["dataset"] == rows["dataset"].iloc[0]]
    first = first[~first["estimator"].isin(ENDS)].sort_values("value", ascending=False)
    rest = [e for e in dict.fromkeys(rows["estimator"]) if e not in ENDS]
    return list(dict.fromkeys([*first["estimator"], *rest]))


def _end(ax: Axes, rows: pd.DataFrame, name: str, style_: str, shade: bool) -> None:
    row = rows[rows["estimator"] == name]
    if row.empty:
        return
    r = row.iloc[0]
    ax.axvline(r["value"], color="black", linestyle=style_, linewidth=1.2,
               label=f"{name} attention {r['value']:.2f}")  # fmt: skip
    if shade:  # its interval, for scale (a method's difference to it is paired: see the report)
        ax.axvspan(r["ci_low"], r["ci_high"], color="black", alpha=0.05, linewidth=0)


def _gap_text(rows: pd.DataFrame, name: str) -> str:
    gap = rows[(rows["metric"] == "human_gap_recovered") & (rows["estimator"] == name)]
    if gap.empty or not np.isfinite(gap["value"].iloc[0]):
        return ""
    return f"{gap['value'].iloc[0]:+.0%}"


def _panel(ax: Axes, rows: pd.DataFrame, methods: list[str]) -> None:
    spear = _spearman(rows).set_index("estimator")
    _end(ax, spear.reset_index(), "exact", "-", shade=True)
    _end(ax, spear.reset_index(), "uniform", "--", shade=False)
    resolved = _gap_resolved(rows)
    for y, name in enumerate(methods):
        if name not in spear.index:
            continue
        r = spear.loc[name]
        value, low, high = float(r["value"]), float(r["ci_low"]), float(r["ci_high"])
        colour, marker = style.colour(name), style.marker(name)
        ax.plot([low, high], [y, y], color=colour, linewidth=1.2, solid_capstyle="butt")
        se = r["stderr"]
        if se is not None and np.isfinite(se) and se > 0:  # the spread over draws: ±2 s.e.
            ax.plot([value - 2 * se, value + 2 * se], [y, y], color=colour, linewidth=4,
                    alpha=0.5, solid_capstyle="butt")  # fmt: skip
        ax.plot(value, y, marker=marker, color=colour, markersize=5, linestyle="none")
        if resolved:
            ax.annotate(_gap_text(rows, name), (1.0, y), xycoords=("axes fraction", "data"),
                        xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize="x-small")  # fmt: skip
    ax.set_yticks(range(len(methods)), methods, fontsize="small")
    ax.set_ylim(len(methods) - 0.5, -0.5)
    docs, pairs = int(rows["documents"].max()), int(rows["pairs"].max())
    model = str(rows["dataset"].iloc[0]).split("@")[0]
    budget = rows["budget"].dropna()
    at = f", F = {int(budget.max())}" if len(budget) else ""
    note = "right: share of the gap uniform → exact recovered" if resolved else (
        "uniform ≈ exact (the gap is within its interval): no share")  # fmt: skip
    ax.set_title(f"{model}{at} ({docs} documents, {pairs} pairs)\n{note}", fontsize="small")
    ax.set_xlabel("Spearman ρ with the human ratings")


def _gap_resolved(rows: pd.DataFrame) -> bool:
    """Whether exact beats uniform attention beyond the paired bootstrap interval of the gap."""
    gap = rows[(rows["metric"] == "human_spearman_minus_exact") & (rows["estimator"] == "uniform")]
    return bool(len(gap)) and float(gap["ci_high"].iloc[0]) < 0


@register_figure(
    NAME,
    title="Does it matter downstream? Encoders' Spearman with human document similarity "
    "(Lee et al. 2005) with each method in every layer",
)
def beyond_similarity(results: dict[str, pd.DataFrame]) -> Figure:
    """One panel per encoder: each method's Spearman (point: the mean over draws; thin bar: the
    95 % bootstrap interval over documents; thick bar: ±2 s.e. over draws), exact (solid, its
    interval shaded) and uniform (dashed) attention as lines, and the share of the gap recovered
    at the right where the gap is resolved."""
    df = results[NAME]
    datasets = list(dict.fromkeys(df["dataset"]))
    methods = method_order(df)
    fig, axes = style.new_figure(ncols=len(datasets), height=0.28 * len(methods) + 1.6)
    for ax, name in zip(axes[0], datasets, strict=True):
        _panel(ax, df[df["dataset"] == name], methods)
        ax.legend(fontsize="x-small", loc="best")
        ax.label_outer()
    return fig
