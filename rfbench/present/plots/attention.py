"""Real-attention figures (experiment ``attention``, docs/experiments.md#attention): the error vs
the budget per layer, the map of heads, the finding across models and masks (issue 29) and what
approximates attention at a fixed budget (issue 28)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator

from rfbench.present.attention_stats import (
    RUNS,
    at_largest_budget,
    beats_uniform_corrected,
    fitting_texts,
    is_local,
    is_random_map,
    longest,
    median_ci,
    model_and_mask,
    output_errors,
)
from rfbench.present.plots import register_figure, style

NAME, MODELS, LEARNED = "beyond-attention", "beyond-attention-models", "beyond-attention-learned"
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
    line = method_line(name, is_local(rows))
    ax.errorbar(curve.index, curve["value"], yerr=[low, high], label=label, capsize=2, **line)


def method_line(name: str, local: bool) -> dict[str, object]:
    """A method's colour and marker; dashed: orthogonal couplings, dotted: local methods (a
    window or top-k keys), solid: the rest."""
    style_ = "--" if name.endswith("@orf") else ":" if local else "-"
    return {"color": method_colour(name), "marker": style.marker(name), "linestyle": style_}


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
        xlabel = "feature budget F" if idx >= len(layers) - ncols else ""
        ax.set(yscale="log", title=f"layer {layer}", xlabel=xlabel, ylabel="‖Ô − O‖_F / ‖O‖_F")
        style.log_ticks(ax, sorted(part["budget"].unique()), base=2)
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
        grid = values.unstack().reindex(index=layers, columns=range(n_heads))
        image = ax.imshow(grid.to_numpy(float), aspect="auto", **colours)
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


#: the y range drawn; a head beyond it (an infinite error, a near-exact top-k head) sits on its edge
Y_RANGE = (0.02, 3.0)


def _label(name: str, rows: pd.DataFrame, df: pd.DataFrame) -> str:
    label = name + (" (oracle)" if "top_k" in rows and rows["top_k"].notna().any() else "")
    cost = df[(df["metric"] == "fit_seconds") & (df["estimator"] == name)]["value"]
    return label + (f"\nfit {np.median(cost):.2g} s/head" if len(cost) else "")


@register_figure(
    LEARNED,
    title="Beyond the papers: what approximates real attention at a fixed feature budget "
    "(learned, local and data-aware methods beside random features)",
)
def attention_learned(results: dict[str, pd.DataFrame]) -> Figure:
    """Per-head output errors of every method at the largest budget and longest sequence (one dot
    per head), ordered by their median (with its 95 % interval); uniform attention dashed with its
    interval shaded, the zero output at 1; fitted methods labelled with their fit time."""
    df = results[LEARNED]
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
    ax.set(yscale="log", ylim=(Y_RANGE[0] / 1.15, Y_RANGE[1] * 1.15))
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


def _model_panel(ax, df: pd.DataFrame, methods: list[str]) -> None:
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
    n_heads, tokens = len(uniform), int(heads["tokens"].max())
    ax.set(yscale="log", title=f"{model}, {mask} ({n_heads} heads, {tokens} tokens)")
    style.log_ticks(ax, budgets)
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))


def _not_run(ax, name: str) -> None:
    ax.text(0.5, 0.5, f"{name}\nnot in these results:\nrfbench run {RUNS[name]}",
            ha="center", va="center", transform=ax.transAxes, fontsize="small")  # fmt: skip
    ax.set(xticks=[], yticks=[])
    ax.grid(False)


@register_figure(
    MODELS,
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
        _model_panel(ax, results[name], methods)
        if idx % MASKS == 0:
            ax.set_ylabel("‖Ô − O‖_F / ‖O‖_F")
        if idx >= len(RUNS) - MASKS:
            ax.set_xlabel("feature budget F")
    legend = style.legend_entries(drawn)
    legend_ax.legend(legend.values(), legend.keys(), loc="center", ncol=4, fontsize="small",
                     frameon=False)  # fmt: skip
    return fig
