"""The real-attention finding side by side across models and masks (issue 29;
docs/experiments.md#attention)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator

from rfbench.present.attention_stats import (
    RUNS,
    beats_uniform_corrected,
    is_random_map,
    median_ci,
    model_and_mask,
    output_errors,
)
from rfbench.present.plots import register_figure, style
from rfbench.present.plots.attention import draw_method

NAME = "beyond-attention-models"
#: panels per row: the masks of one model (RUNS lists each model's bidirectional run first)
MASKS = 2


def _methods(results: dict[str, pd.DataFrame]) -> list[str]:
    """The methods measured by at least half the runs (in the order they first appear): the
    grid the runs share, without the extra methods of one run."""
    names = [list(dict.fromkeys(output_errors(df)[0]["estimator"])) for df in results.values()]
    order = list(dict.fromkeys(e for run in names for e in run))
    return [e for e in order if 2 * sum(e in run for run in names) >= len(names)]


def _shares(heads: pd.DataFrame, methods: list[str]) -> str:
    """'random maps beat uniform in a–b % of heads (Holm, F = …)' at the largest budget, over
    the random maps among ``methods``."""
    at = heads[(heads["budget"] == heads["budget"].max()) & heads["estimator"].isin(methods)]
    shares = [beats_uniform_corrected(rows).mean() for name, rows in at.groupby("estimator")
              if is_random_map(name, rows)]  # fmt: skip
    if not shares:
        return ""
    span = f"{min(shares):.0%}–{max(shares):.0%}" if len(shares) > 1 else f"{shares[0]:.0%}"
    return f"random maps beat uniform\nin {span} of heads (Holm, F = {int(at['budget'].max())})"


def _panel(ax, df: pd.DataFrame, methods: list[str]) -> None:
    heads, uniform = output_errors(df)
    for name in methods:
        rows = heads[heads["estimator"] == name]
        if rows.empty:
            continue
        draw_method(ax, name, rows, label=name)
    median, low, high = median_ci(uniform["value"].to_numpy(dtype=float))
    ax.axhline(median, color="black", linestyle="--", label="uniform")
    if low < high:
        ax.axhspan(low, high, color="black", alpha=0.08, linewidth=0)
    ax.axhline(1.0, color="grey", linestyle=":", label="zero output")
    ax.text(
        0.03, 0.03, _shares(heads, methods), transform=ax.transAxes, fontsize="x-small", va="bottom"
    )
    budgets = sorted(heads["budget"].unique())
    model, mask = model_and_mask(df)
    n_heads = len(uniform)
    ax.set(xscale="log", yscale="log", title=f"{model}, {mask} ({n_heads} heads, "
           f"{int(heads['tokens'].max())} tokens)", xticks=budgets)  # fmt: skip
    ax.set_xticklabels([str(int(b)) for b in budgets])
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.minorticks_off()


def _not_run(ax, name: str) -> None:
    ax.text(0.5, 0.5, f"{name}\nnot in these results:\nrfbench run {RUNS[name]}",
            ha="center", va="center", transform=ax.transAxes, fontsize="small")  # fmt: skip
    ax.set(xticks=[], yticks=[])
    ax.grid(False)


@register_figure(
    NAME,
    needs=list(RUNS),
    title="Beyond the papers: attention output error vs features, two models, bidirectional "
    "and causal",
    partial=True,
)
def attention_models(results: dict[str, pd.DataFrame]) -> Figure:
    """One panel per run of RUNS (model, mask): output error vs F per shared method, the median
    over heads with its 95 % interval, uniform and zero as lines; a missing run's panel names the
    command that produces it."""
    methods = _methods(results)
    rows = -(-len(RUNS) // MASKS)
    fig, grid, legend_ax = style.with_legend_row(MASKS, rows, height=2.4, ratio=0.25)
    drawn = [ax for ax, name in zip(grid.flat, RUNS, strict=True) if name in results]
    for ax in drawn[1:]:
        ax.sharey(drawn[0])
    for idx, (ax, name) in enumerate(zip(grid.flat, RUNS, strict=True)):
        if name not in results:
            _not_run(ax, name)
            continue
        _panel(ax, results[name], methods)
        if idx % MASKS == 0:
            ax.set_ylabel("‖Ô − O‖_F / ‖O‖_F")
        if idx >= len(RUNS) - MASKS:
            ax.set_xlabel("feature budget F")
    legend = style.legend_entries(drawn)
    legend_ax.legend(legend.values(), legend.keys(), loc="center", ncol=4, fontsize="small",
                     frameon=False)  # fmt: skip
    return fig
