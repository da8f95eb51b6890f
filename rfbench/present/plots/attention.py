"""Real-attention figures (experiment ``attention``, docs/experiments.md#attention)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rfbench.present.attention_stats import beats_uniform_corrected, is_local, longest, median_ci
from rfbench.present.plots import register_figure, style

NAME = "beyond-attention"
_COMPONENTS = ("positive", "hyperbolic", "gerf", "trig")


#: the local methods' colours, apart from the components' C0-C3
_LOCAL = {"window": "C4", "top-k": "black"}


def method_colour(name: str) -> str:
    """Distinct colours for the four components of the default grid and the local methods (a
    window with a map: C5), else the shared style."""
    if name in _LOCAL:
        return _LOCAL[name]
    if name.startswith("window+"):
        return "C5"
    component = name.split("@")[0]
    if component in _COMPONENTS:
        return f"C{_COMPONENTS.index(component)}"
    return style.colour(name)


def head_medians(rows: pd.DataFrame) -> pd.DataFrame:
    """Per budget: the median over heads and its 95 % interval (the interval's ends fall back
    to the median where the heads are too few for one)."""
    out = {}
    for budget, part in rows.groupby("budget"):
        median, low, high = median_ci(part["value"].to_numpy(dtype=float))
        low, high = (median, median) if not np.isfinite(low + high) else (low, high)
        out[budget] = {"value": median, "low": low, "high": high}
    return pd.DataFrame.from_dict(out, orient="index").sort_index()


def draw_method(ax, name: str, rows: pd.DataFrame, label: str | None) -> None:
    """One method's curve: per budget the median over heads with its 95 % interval."""
    curve = head_medians(rows)
    low, high = curve["value"] - curve["low"], curve["high"] - curve["value"]
    line = {"color": method_colour(name), "marker": style.marker(name)}
    # dashed: orthogonal couplings; dotted: local methods (a window or top-k keys); solid: the rest
    line["linestyle"] = "--" if name.endswith("@orf") else ":" if is_local(rows) else "-"
    ax.errorbar(curve.index, curve["value"], yerr=[low, high], label=label, capsize=2, **line)


@register_figure(
    "beyond-attention",
    needs=[NAME],
    title="Beyond the papers: attention output error vs features on all-MiniLM-L6-v2, baselines",
)
def attention_error(results: dict[str, pd.DataFrame]) -> Figure:
    """Output error ‖Ô − O‖_F/‖O‖_F vs the feature budget per layer at the longest sequence: per
    method the median over heads with its 95 % interval (local methods dotted); uniform attention
    (median over heads), the zero output and the oracle rank-F A_F V (not a bound) as lines."""
    df = results[NAME]
    heads = longest(df[(df["kind"] == "heads") & (df["metric"] == "out_rel_frob")])
    base = longest(df[(df["kind"] == "baselines") & (df["metric"] == "out_rel_frob")])
    layers = sorted(heads["layer"].unique())
    ncols = min(3, len(layers))
    nrows = int(np.ceil(len(layers) / ncols))
    fig, axes, legend_ax = style.with_legend_row(ncols, nrows, height=2.2, ratio=0.3)
    for idx, layer in enumerate(layers):
        ax = axes.flat[idx]
        part = heads[heads["layer"] == layer]
        for name, rows in part.groupby("estimator", sort=False):
            draw_method(ax, name, rows, label=name if idx == 0 else None)
        lb = base[base["layer"] == layer]
        uniform = lb[lb["estimator"] == "uniform"]["value"].median()
        ax.axhline(uniform, color="black", linestyle="--", label="uniform" if idx == 0 else None)
        ax.axhline(1.0, color="grey", linestyle=":", label="zero output" if idx == 0 else None)
        rank = lb[lb["estimator"] == "best-rank"].groupby("rank")["value"].median()
        rank = rank[rank.index.isin(part["budget"].unique())]
        ax.plot(rank.index, np.maximum(rank.to_numpy(), 1e-6), color="grey", linestyle="-.",
                label="oracle rank-F A_F V" if idx == 0 else None)  # fmt: skip
        ax.set_xscale("log", base=2)
        ms = sorted(part["budget"].unique())
        bottom_row = idx >= len(layers) - ncols
        xlabel = "feature budget F" if bottom_row else ""
        ax.set(yscale="log", title=f"layer {layer}", xlabel=xlabel, xticks=ms,
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
    title="Beyond the papers: smallest feature budget at which each method beats uniform "
    "attention (Holm over heads)",
)
def attention_map(results: dict[str, pd.DataFrame]) -> Figure:
    """Per method a layer × head map of the smallest budget beating uniform attention (Holm over
    the heads; blank: at no F), and each head's largest logit and attention entropy."""
    df = results[NAME]
    heads = longest(df[(df["kind"] == "heads") & (df["metric"] == "out_rel_frob")])
    heads = heads.assign(beats_uniform=beats_uniform_corrected(heads))
    stats = longest(df[(df["kind"] == "baselines") & (df["estimator"] == "exact")])
    names = list(dict.fromkeys(heads["estimator"]))
    layers = sorted(heads["layer"].unique())
    n_heads = int(heads["head"].max()) + 1
    ms = sorted(heads["budget"].unique())
    panels = len(names) + 2
    ncols = min(4, panels)
    nrows = int(np.ceil(panels / ncols))
    fig, axes = style.new_figure(ncols=ncols, nrows=nrows, height=2.0)

    def head_map(ax, values: pd.Series, title: str, **colours):
        """``values`` indexed by (layer, head) as a layer × head image."""
        grid = np.full((len(layers), n_heads), np.nan)
        for (layer, head), value in values.items():
            if layer in layers and head < n_heads:
                grid[layers.index(layer), int(head)] = value
        image = ax.imshow(grid, aspect="auto", **colours)
        ax.set(title=title, xlabel="head", ylabel="layer", yticks=range(len(layers)))
        ax.set_yticklabels(layers)
        return image

    scale = {"cmap": "viridis", "vmin": np.log2(ms[0]), "vmax": np.log2(ms[-1])}
    for ax, name in zip(axes.flat, names, strict=False):
        beats = heads[(heads["estimator"] == name) & (heads["beats_uniform"] == True)]  # noqa: E712
        smallest = beats.groupby(["layer", "head"])["budget"].min()
        head_map(ax, np.log2(smallest), name, **scale)
    head_stats = (("max_logit", "max qᵀk"), ("attn_entropy", "attention entropy (nats)"))
    for ax, (metric, label) in zip(axes.flat[len(names) :], head_stats, strict=False):
        rows = stats[stats["metric"] == metric]
        image = head_map(ax, rows.set_index(["layer", "head"])["value"], label, cmap="magma")
        fig.colorbar(image, ax=ax, shrink=0.8)
    for ax in axes.flat[panels:]:
        ax.set_visible(False)
    ticks = ", ".join(f"{m}" for m in ms)
    fig.suptitle(f"colour: smallest F (of {ticks}; dark = small) beating uniform; blank: none",
                 fontsize="small")  # fmt: skip
    return fig
