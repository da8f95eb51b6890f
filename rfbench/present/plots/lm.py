"""Does it matter downstream? A causal LM's perplexity and passkey recall after the attention
swap (docs/experiments.md#language-model)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rfbench.present.plots import register_figure, style
from rfbench.present.plots.attention import method_line

NAME = "beyond-lm"
#: the two ends every method sits between
ENDS = ("exact", "uniform")


def _line(name: str) -> dict[str, object]:
    if name == "uniform":  # as the line of the first panel
        return {"color": "black", "marker": "o", "linestyle": "--"}
    return method_line(name, local=name.startswith("window") or name == "top-k")


def _perplexity(df: pd.DataFrame, every: bool) -> pd.DataFrame:
    """The perplexity ratios with the method in every layer (or in one)."""
    ratios = df[(df["kind"] == "perplexity") & (df["metric"] == "ppl_ratio")]
    return ratios[ratios["layer"].isna() == every]


def _errorbar(ax, x, rows: pd.DataFrame, name: str) -> None:
    se = rows["stderr"].astype(float).fillna(0.0).to_numpy()
    ax.errorbar(x, rows["value"].astype(float), yerr=se, label=name, capsize=2, **_line(name))


def _budgets(ax, df: pd.DataFrame) -> None:
    rows = _perplexity(df, every=True)
    for name, part in rows[~rows["estimator"].isin(ENDS)].groupby("estimator", sort=False):
        part = part[np.isfinite(part["value"].astype(float))].sort_values("budget")
        if not part.empty:
            _errorbar(ax, part["budget"].astype(int), part, name)
    uniform = rows[rows["estimator"] == "uniform"]["value"]
    if not uniform.empty:
        ax.axhline(float(uniform.iloc[0]), color="black", linestyle="--", label="uniform")
    ax.axhline(1.0, color="grey", linestyle="-", linewidth=0.8, label="exact")
    budgets = sorted(rows["budget"].dropna().astype(int).unique())
    ax.set(yscale="log", xlabel="feature budget F", ylabel="perplexity / exact")
    ax.set_title("every layer swapped")
    style.log_ticks(ax, budgets)


def _layers(ax, df: pd.DataFrame) -> None:
    rows = _perplexity(df, every=False)
    for name, part in rows.groupby("estimator", sort=False):
        part = part.sort_values("layer")
        _errorbar(ax, part["layer"].astype(int), part, name)
    ax.axhline(1.0, color="grey", linestyle="-", linewidth=0.8)
    budget = rows["budget"].dropna()
    at = f" (F = {int(budget.iloc[0])})" if not budget.empty else ""
    ax.set(yscale="log", xlabel="layer swapped (the others exact)", ylabel="perplexity / exact",
           title=f"one layer swapped{at}")  # fmt: skip


def _recall(ax, df: pd.DataFrame) -> None:
    rows = df[(df["kind"] == "passkey") & (df["metric"] == "passkey_token_accuracy")]
    names = list(dict.fromkeys(rows["estimator"]))
    lengths = sorted(rows["tokens"].astype(int).unique())
    width = 0.8 / max(len(lengths), 1)
    for j, length in enumerate(lengths):
        part = rows[rows["tokens"] == length].set_index("estimator").reindex(names)
        x = np.arange(len(names)) + (j - (len(lengths) - 1) / 2) * width
        ax.bar(x, part["value"].astype(float), width, yerr=part["stderr"].astype(float).fillna(0),
               label=f"{length} tokens", color=style.grey(j), capsize=2)  # fmt: skip
    ax.set_xticks(np.arange(len(names)))
    ax.set_xticklabels(names, rotation=90, fontsize="x-small")
    budget = rows["budget"].dropna()
    at = f", F = {int(budget.iloc[0])}" if not budget.empty else ""
    ax.set(ylim=(0, 1.05), ylabel="answer tokens recalled", title=f"passkey{at}")
    ax.legend(fontsize="x-small", loc="upper right", frameon=False)


@register_figure(NAME, title="Beyond the papers: a causal LM's perplexity and passkey recall "
                 "after the attention swap")  # fmt: skip
def lm_downstream(results: dict[str, pd.DataFrame]) -> Figure:
    """Three panels: perplexity / exact against the feature budget with each method in every
    layer (log scales; exact and uniform as lines, standard errors over draws), perplexity /
    exact with one layer swapped at a time, and passkey recall (answer tokens) per method."""
    df = results[NAME]
    fig, grid, legend_ax = style.with_legend_row(3, 1, height=3.2, ratio=0.35)
    _budgets(grid[0, 0], df)
    _layers(grid[0, 1], df)
    _recall(grid[0, 2], df)
    legend = style.legend_entries([grid[0, 0], grid[0, 1]])
    legend_ax.legend(legend.values(), legend.keys(), loc="center", ncol=4, fontsize="x-small",
                     frameon=False)  # fmt: skip
    fig.tight_layout()
    return fig
