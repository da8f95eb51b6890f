"""CSE Figs. 1-5 (Kachappilly & Powers 2024, Sec. 4; spec/cse.md §4): pointwise relative errors.

The paper shows distributions of |K̂ - SM|/SM per angle for trig, FAVOR+ and the combined
estimator; we plot the relative RMSE √MSE/SM with ±2 s.e. bands and its closed form (dashed) where
one exists (not for the shared-all CSE, which has none; rel_mae is in the parquet too). Fig. 2 has a
panel per radius, Fig. 3 per number of features, Fig. 5 compares the sharing variants; Fig. 4
counts negative estimates against the paper's 89/10,000 for trig.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rfbench.plots import register_figure, style
from rfbench.plots.pointwise import Curve, curves, error_curves, theory_handle, unique

METRIC = "rel_rmse"
PAPER_NEGATIVES = {"trig@iid": 89}  # CSE Sec. 4, Fig. 4: out of 10,000 estimations


def _panels(
    df: pd.DataFrame, key: Callable[[Curve], object], title: Callable[[object], str], suptitle: str
) -> Figure:
    items = curves(df)
    groups = unique(key(c) for c in items)
    fig, axes = style.new_figure(ncols=len(groups), height=2.5)
    for ax, group in zip(axes[0], groups, strict=True):
        error_curves(ax, [c for c in items if key(c) == group], METRIC, theory=False)
        for c in (c for c in items if key(c) == group and c.has("theory_rel_rmse")):
            ax.plot(c.theta, c.values("theory_rel_rmse"), color=style.colour(c.estimator),
                    linestyle=(0, (4, 2)), linewidth=1.0)  # fmt: skip
        ax.set_title(title(group))
    axes[0][0].set_ylabel("relative error √MSE / SM")
    seen: dict[str, object] = {}
    for ax in axes[0]:
        for handle, text in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(text, handle)
        if ax is not axes[0][0]:
            ax.set_xlabel("")
    seen["closed form"] = theory_handle("closed form")
    axes[0][-1].legend(list(seen.values()), list(seen), loc="lower center", fontsize=6)
    fig.suptitle(suptitle)
    return fig


@register_figure("cse-fig1", needs=["cse-fig1"], title="CSE Fig. 1: relative error vs angle, r = 1")
def cse_fig1(results: dict[str, pd.DataFrame]) -> Figure:
    return _panels(results["cse-fig1"], lambda c: c.r, lambda r: f"r = {r:g}",
                   "CSE Fig. 1: d = 64, m = 128")  # fmt: skip


@register_figure("cse-fig2", needs=["cse-fig2"], title="CSE Fig. 2: relative error per radius r")
def cse_fig2(results: dict[str, pd.DataFrame]) -> Figure:
    return _panels(results["cse-fig2"], lambda c: c.r, lambda r: f"r = {r:g}",
                   "CSE Fig. 2: d = 64, m = 128, r = 1, 2, 3")  # fmt: skip


@register_figure(
    "cse-fig3", needs=["cse-fig3"], title="CSE Fig. 3: relative error per feature count"
)
def cse_fig3(results: dict[str, pd.DataFrame]) -> Figure:
    return _panels(results["cse-fig3"], lambda c: c.m, lambda m: f"m = {m}",
                   "CSE Fig. 3: d = 64, r = 1, m = 64, 128, 256")  # fmt: skip


@register_figure("cse-fig5", needs=["cse-fig5"], title="CSE Fig. 5: sharing variants of the CSE")
def cse_fig5(results: dict[str, pd.DataFrame]) -> Figure:
    return _panels(
        results["cse-fig5"],
        lambda c: c.variant if c.estimator in ("cse", "angular-hybrid@iid") else "baselines",
        lambda v: f"{v}" if v == "baselines" else f"variant: {v}",
        "CSE Fig. 5: independent projections per estimator (r = 1, m = 128)",
    )


@register_figure("cse-fig4", needs=["cse-fig4"], title="CSE Fig. 4: negative estimates per 10,000")
def cse_fig4(results: dict[str, pd.DataFrame]) -> Figure:
    df = results["cse-fig4"]
    neg = df[df["metric"] == "neg_count"].copy()
    neg["m"] = neg["m"].astype(float)
    ms = sorted(neg["m"].dropna().unique())
    names = unique(neg["estimator"])
    fig, axes = style.new_figure(height=2.6)
    ax = axes[0][0]
    width = 0.8 / max(len(ms), 1)
    for k, m in enumerate(ms):
        part = neg[neg["m"] == m].set_index("estimator")
        counts = [float(part["value"].get(e, np.nan)) for e in names]
        x = np.arange(len(names)) + (k - (len(ms) - 1) / 2) * width
        shade = 0.55 + 0.45 * k / max(1, len(ms) - 1)
        colours = [style.colour(e) for e in names]
        bars = ax.bar(x, counts, width, label=f"m = {int(m)}", alpha=shade, color=colours)
        for bar, count in zip(bars, counts, strict=True):
            ax.annotate(f"{count:.0f}", (bar.get_x() + bar.get_width() / 2, count),
                        ha="center", va="bottom", fontsize=6)  # fmt: skip
    for e, value in PAPER_NEGATIVES.items():
        if e in names:
            ax.axhline(value, color=style.colour(e), linestyle=":", linewidth=1.0)
            ax.annotate(f"paper: {value} (m = 128)", (len(names) - 0.5, value), ha="right",
                        va="bottom", fontsize=6)  # fmt: skip
    ax.set_xticks(np.arange(len(names)), [style.label(e) for e in names])
    total = int(neg["n_trials"].max()) if len(neg) else 0
    ax.set_ylabel(f"negative estimates K̂ < 0 (of {total:,})")
    ax.set_title("CSE Fig. 4: negative kernel scores, r = 1")
    ax.legend(loc="upper right")
    return fig
