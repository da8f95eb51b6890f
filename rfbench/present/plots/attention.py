"""Real-attention figures (experiment ``attention``, docs/experiments.md#attention).

- ``beyond-attention``: per layer, the relative output error ‖Ô − O‖_F/‖O‖_F vs projections m
  per estimator (mean over heads, ± the mean of the per-head standard errors), with the baselines
  as horizontal lines: uniform attention (mean over heads), the zero output (1), and the oracle
  best rank-m approximation A_m V (dotted, not a bound on output errors). Longest sequence only.
- ``beyond-attention-map``: per estimator a layer × head map of the smallest m at which it beats
  uniform attention significantly (blank: at no m), and beside them each head's largest logit
  max qᵀk and exact attention entropy (context for why some heads are hard).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rfbench.present.plots import register_figure, style

NAME = "beyond-attention"
_COMPONENTS = ("positive", "hyperbolic", "gerf", "trig")


def _colour(name: str) -> str:
    """Distinct colours for the four components of the default grid, else the shared style."""
    component = name.split("@")[0]
    if component in _COMPONENTS:
        return f"C{_COMPONENTS.index(component)}"
    return style.colour(name)


def _longest(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["tokens"] == df["tokens"].max()] if df["tokens"].notna().any() else df


@register_figure(
    "beyond-attention",
    needs=[NAME],
    title="Beyond the papers: attention output error vs features on all-MiniLM-L6-v2, baselines",
)
def attention_error(results: dict[str, pd.DataFrame]) -> Figure:
    """Output error vs m per layer, estimators as curves and baselines as lines."""
    df = results[NAME]
    heads = _longest(df[(df["kind"] == "heads") & (df["metric"] == "out_rel_frob")])
    base = _longest(df[(df["kind"] == "baselines") & (df["metric"] == "out_rel_frob")])
    layers = sorted(heads["layer"].unique())
    ncols = min(3, len(layers))
    nrows = int(np.ceil(len(layers) / ncols))
    fig, grid = style.new_figure(ncols=ncols, nrows=nrows + 1, height=2.2)
    spec = grid[0, 0].get_gridspec()
    spec.set_height_ratios([1.0] * nrows + [0.3])
    for ax in grid[-1]:
        ax.remove()
    legend_ax = fig.add_subplot(spec[-1, :])
    legend_ax.axis("off")
    axes = grid[:-1]
    for idx, layer in enumerate(layers):
        ax = axes.flat[idx]
        part = heads[heads["layer"] == layer]
        for name, rows in part.groupby("estimator", sort=False):
            finite = rows[np.isfinite(rows["value"])]
            curve = finite.groupby("m").agg(value=("value", "mean"), se=("stderr", "mean"))
            ax.errorbar(curve.index, curve["value"], yerr=curve["se"].fillna(0),
                        label=name if idx == 0 else None,
                        color=_colour(name), marker=style.marker(name), capsize=2,
                        linestyle="--" if name.endswith("@orf") else "-")  # fmt: skip
        lb = base[base["layer"] == layer]
        uniform = lb[lb["estimator"] == "uniform"]["value"].mean()
        ax.axhline(uniform, color="black", linestyle="--", label="uniform" if idx == 0 else None)
        ax.axhline(1.0, color="grey", linestyle=":", label="zero output" if idx == 0 else None)
        rank = lb[lb["estimator"] == "best-rank"].groupby("rank")["value"].mean()
        rank = rank[rank.index.isin(part["m"].unique())]
        ax.plot(rank.index, np.maximum(rank.to_numpy(), 1e-6), color="grey", linestyle="-.",
                label="oracle rank-m A_m V" if idx == 0 else None)  # fmt: skip
        ax.set_xscale("log", base=2)
        ms = sorted(part["m"].unique())
        bottom_row = idx >= len(layers) - ncols
        ax.set(yscale="log", title=f"layer {layer}", xlabel="projections m" if bottom_row else "",
               xticks=ms,
               xticklabels=[str(int(m)) for m in ms], ylabel="‖Ô − O‖_F / ‖O‖_F")  # fmt: skip
        ax.minorticks_off()
    for ax in axes.flat[len(layers) :]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    legend_ax.legend(handles, labels, loc="center", ncol=6, fontsize="small", frameon=False)
    return fig


@register_figure(
    "beyond-attention-map",
    needs=[NAME],
    title="Beyond the papers: smallest m at which each estimator beats uniform attention",
)
def attention_map(results: dict[str, pd.DataFrame]) -> Figure:
    """Layer × head maps of the smallest m beating uniform attention, and head statistics."""
    df = results[NAME]
    heads = _longest(df[(df["kind"] == "heads") & (df["metric"] == "out_rel_frob")])
    stats = _longest(df[(df["kind"] == "baselines") & (df["estimator"] == "exact")])
    names = list(dict.fromkeys(heads["estimator"]))
    layers = sorted(heads["layer"].unique())
    n_heads = int(heads["head"].max()) + 1
    ms = sorted(heads["m"].unique())
    panels = len(names) + 2
    ncols = min(4, panels)
    nrows = int(np.ceil(panels / ncols))
    fig, axes = style.new_figure(ncols=ncols, nrows=nrows, height=2.0)
    cmap = "viridis"
    for idx, name in enumerate(names):
        ax = axes.flat[idx]
        grid = np.full((len(layers), n_heads), np.nan)
        beats = heads[(heads["estimator"] == name) & (heads["beats_uniform"] == True)]  # noqa: E712
        for (layer, head), m in beats.groupby(["layer", "head"])["m"].min().items():
            grid[layers.index(layer), int(head)] = np.log2(m)
        ax.imshow(grid, aspect="auto", cmap=cmap, vmin=np.log2(ms[0]), vmax=np.log2(ms[-1]))
        ax.set(title=name, xlabel="head", ylabel="layer", yticks=range(len(layers)),
               yticklabels=layers)  # fmt: skip
    for offset, (metric, label) in enumerate(
        (("max_logit", "max qᵀk"), ("attn_entropy", "attention entropy (nats)"))
    ):
        ax = axes.flat[len(names) + offset]
        grid = np.full((len(layers), n_heads), np.nan)
        for _, row in stats[stats["metric"] == metric].iterrows():
            if row["layer"] in layers and row["head"] < n_heads:
                grid[layers.index(row["layer"]), int(row["head"])] = row["value"]
        image = ax.imshow(grid, aspect="auto", cmap="magma")
        fig.colorbar(image, ax=ax, shrink=0.8)
        ax.set(title=label, xlabel="head", ylabel="layer", yticks=range(len(layers)),
               yticklabels=layers)  # fmt: skip
    for ax in axes.flat[panels:]:
        ax.set_visible(False)
    ticks = ", ".join(f"{m}" for m in ms)
    fig.suptitle(f"colour: smallest m (of {ticks}; dark = small) beating uniform; blank: none",
                 fontsize="small")  # fmt: skip
    return fig
