"""What approximates a real model's attention at a fixed budget (issue 28;
docs/experiments.md#attention)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rfbench.present.attention_stats import at_largest_budget, fitting_texts, is_local, median_ci
from rfbench.present.plots import register_figure, style
from rfbench.present.plots.attention import method_colour

NAME = "beyond-attention-learned"
#: the y range drawn; a head beyond it (an infinite error, a near-exact top-k head) sits on its edge
Y_RANGE = (0.02, 3.0)


def _label(name: str, rows: pd.DataFrame, df: pd.DataFrame) -> str:
    label = name + (" (oracle)" if "top_k" in rows and rows["top_k"].notna().any() else "")
    cost = df[(df["metric"] == "fit_seconds") & (df["estimator"] == name)]["value"]
    return label + (f"\nfit {np.median(cost):.2g} s/head" if len(cost) else "")


@register_figure(
    NAME,
    title="Beyond the papers: what approximates real attention at a fixed feature budget "
    "(learned, local and data-aware methods beside random features)",
)
def attention_learned(results: dict[str, pd.DataFrame]) -> Figure:
    """Per-head output errors of every method at the largest budget and longest sequence (one dot
    per head), ordered by their median (with its 95 % interval); uniform attention dashed with its
    interval shaded, the zero output at 1; fitted methods labelled with their fit time."""
    df = results[NAME]
    heads, uniform = at_largest_budget(df)
    budget = int(heads["budget"].max())
    medians = heads.groupby("estimator")["value"].median().sort_values()
    fig, axes = style.new_figure(ncols=1, nrows=1, height=3.4, width=7.2)
    ax = np.ravel(axes)[0]
    rng = np.random.default_rng(0)  # horizontal jitter of the dots only
    for x, name in enumerate(medians.index):
        rows = heads[heads["estimator"] == name]
        values = rows["value"].to_numpy(float)
        colour = method_colour(name)
        shown = np.clip(values, *Y_RANGE)
        ax.scatter(x + rng.uniform(-0.18, 0.18, shown.size), shown, s=5, color=colour,
                   alpha=0.35, linewidths=0, marker="s" if is_local(rows) else "o")  # fmt: skip
        median, low, high = median_ci(values)
        if np.isfinite(low + high):
            ax.errorbar(x, median, yerr=[[median - low], [high - median]], color="black",
                        capsize=3, lw=1.2, zorder=3)  # fmt: skip
        ax.plot(x, median, marker="_", color="black", markersize=16, mew=2, zorder=4)
    u_median, u_low, u_high = median_ci(uniform["value"].to_numpy(float))
    ax.axhline(u_median, color="0.3", ls="--", lw=1, label=f"uniform attention ({u_median:.2f})")
    if np.isfinite(u_low + u_high):
        ax.axhspan(u_low, u_high, color="0.5", alpha=0.15, lw=0)
    ax.axhline(1.0, color="0.3", ls="-.", lw=0.8, label="zero output")
    ax.set_yscale("log")
    ax.set_ylim(Y_RANGE[0] / 1.15, Y_RANGE[1] * 1.15)
    ax.set_xticks(range(len(medians)))
    ax.set_xticklabels([_label(n, heads[heads["estimator"] == n], df) for n in medians.index],
                       rotation=35, ha="right", fontsize=7)  # fmt: skip
    ax.set_ylabel("‖Ô − O‖_F / ‖O‖_F per head")
    texts = fitting_texts(df)
    where = f", fitted on {texts[0]}, measured on {texts[1]}" if texts else ""
    tokens = int(heads["tokens"].max())
    n_heads = heads[["layer", "head"]].drop_duplicates().shape[0]
    ax.set_title(f"F = {budget} features (or keys) per query row, {tokens} tokens, {n_heads} heads"
                 f"{where}\none dot per head (beyond the axis: on its edge); "
                 "bars: median over heads, 95 % interval",
                 fontsize=8)  # fmt: skip
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    return fig
