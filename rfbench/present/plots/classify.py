"""Kernel-regression classification figures (experiment ``classify``): SimRF Fig. 8 and Fig. 10,
DERF Fig. 3 (docs/experiments.md#simrf-fig8, #simrf-fig10, #derf-fig3)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from rfbench.compute.text import family_of, weights_of
from rfbench.present.plots import register_figure, style
from rfbench.present.plots.variance import legend_on_top, panel_grid
from rfbench.present.reference import PAPER_NAMES, paper_name, table
from rfbench.present.statistics import peak_rows

EXACT = "exact"
#: The exact-kernel reference, in every figure of this module.
#: (style.colour: ``coupling_colour("exact")`` would read "exact" as a family with coupling iid.)
EXACT_LINE = {"color": style.colour(EXACT), "linestyle": ":", "linewidth": 1.1}
#: σ ticks of SimRF Fig. 10 (the grid is 20 log-spaced values on [0.1, 2]).
SIGMA_TICKS = (0.01, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0)
#: Relative horizontal spread of the error bars of different estimators on a log x-axis.
JITTER = 0.025
#: an estimator's colour or legend name
Namer = Callable[[str], str]


def _draws(rows: pd.DataFrame) -> str:
    """'n draws' or 'n₁–n₂ draws' (the trials behind each point; per data set in Tables 2-3)."""
    n = rows["n_trials"].dropna().astype(int)
    if n.empty:
        return ""
    return f"{n.min()} draws" if n.min() == n.max() else f"{n.min()}–{n.max()} draws"


def estimators(df: pd.DataFrame) -> list[str]:
    return [e for e in dict.fromkeys(df["estimator"]) if e != EXACT]


def average(rows: pd.DataFrame, x: str) -> pd.DataFrame:
    """Mean over data sets per (estimator, x), only where every data set has the point; the s.e.
    of the mean of independent per-data-set means is √(Σ s.e.²) / n."""
    n = rows["dataset"].nunique()
    grouped = rows.groupby(["estimator", x], sort=False)
    out = grouped.agg(
        value=("value", "mean"),
        var=("stderr", lambda s: float(np.sum(np.square(s.fillna(0.0))))),
        count=("dataset", "nunique"),
        n_trials=("n_trials", "min"),
    ).reset_index()
    out = out[out["count"] == n]
    return out.assign(stderr=np.sqrt(out["var"]) / n, dataset="average")


def draw_curves(
    ax: Axes, rows: pd.DataFrame, x: str, colour: Namer, name: Namer, scale: float = 1.0
) -> None:
    """One errorbar curve per estimator (value ± stderr against column ``x``), slightly spread."""
    names = estimators(rows)
    spread = np.linspace(-JITTER, JITTER, len(names)) if len(names) > 1 else [0.0]
    for est, shift in zip(names, spread, strict=True):
        line = rows[rows["estimator"] == est].sort_values(x)
        ax.errorbar(line[x] * (1 + shift), line["value"] * scale,
                    line["stderr"].fillna(0.0) * scale, color=colour(est),
                    marker=style.marker(est), capsize=1.5, elinewidth=0.8,
                    label=name(est))  # fmt: skip


def draw_exact(ax: Axes, exact: pd.DataFrame, scale: float = 1.0) -> None:
    if len(exact):
        ax.axhline(float(exact["value"].mean()) * scale, label="exact kernel", **EXACT_LINE)


def log_x(ax: Axes, ticks: list[float]) -> None:
    """Log x-axis with the grid's values as tick labels."""
    style.log_ticks(ax, ticks)
    lo, hi = min(ticks), max(ticks)
    ax.set_xlim(lo / (hi / lo) ** 0.08, hi * (hi / lo) ** 0.08)


def _mark_alike(ax: Axes, rows: pd.DataFrame, x: str, scale: float) -> None:
    """Label the curves whose every point has no spread over draws: each draw predicted alike, at
    a σ so small that the kernel is flat (DERF Fig. 3 on car: TrigRF's tuned σ = 0.01 gives the
    majority class; docs/experiments.md#derf-fig3)."""
    alike = rows.groupby("estimator", sort=False).filter(lambda g: bool((g["stderr"] == 0).all()))
    for sigma, part in alike.groupby("sigma"):
        last = part.loc[part[x].idxmax()]
        where = (last[x], scale * last["value"])
        low, high = ax.get_ylim()  # room below the curve for the label
        ax.set_ylim(min(low, where[1] - 0.12 * (high - low)), high)
        ax.annotate(f"σ = {sigma:.3g}: no spread over draws", where, xytext=(0, -4),
                    textcoords="offset points", ha="right", va="top", fontsize=5.5,
                    color="0.3")  # fmt: skip


def accuracy_grid(
    df: pd.DataFrame,
    x: str,
    colour: Namer,
    name: Namer,
    subtitle: Callable[[pd.DataFrame], str],
    scale: float = 1.0,
) -> tuple[Figure, list[Axes]]:
    """One panel per data set (test accuracy vs ``x``) and, with several data sets, the average."""
    acc = df[df["metric"] == "accuracy"]
    rf, exact = acc[acc["estimator"] != EXACT], acc[acc["estimator"] == EXACT]
    datasets = list(dict.fromkeys(acc["dataset"]))
    with_average = len(datasets) > 1
    fig, panels = panel_grid(len(datasets) + with_average, ncols=3, panel_height=1.75)
    ticks = sorted(float(v) for v in rf[x].dropna().unique())
    for ax, ds in zip(panels, datasets, strict=False):
        part = rf[rf["dataset"] == ds]
        draw_curves(ax, part, x, colour, name, scale)
        draw_exact(ax, exact[exact["dataset"] == ds], scale)
        _mark_alike(ax, part, x, scale)
        ax.set_title(rf"$\bf{{{ds}}}$" + "\n" + subtitle(acc[acc["dataset"] == ds]), fontsize=6.5)
    if with_average:
        ax = panels[-1]
        mean = average(rf, x)
        draw_curves(ax, mean, x, colour, name, scale)
        per_ds = exact.groupby("dataset")["value"].mean()
        if len(per_ds) == len(datasets):
            draw_exact(ax, per_ds.to_frame("value"), scale)
        ax.set_title(r"$\bf{average}$" + f"\nover {len(datasets)} data sets", fontsize=6.5)
    for ax in panels:
        if ticks:
            log_x(ax, ticks)
    return fig, panels


def _paper_table2() -> dict[tuple[str, str], float]:
    """(data set, estimator) -> SimRF Table 2 accuracy at m = d (rfbench.present.reference)."""
    cells = table("simrf-table2", "dataset", "estimator", metric="accuracy")
    return {key: e.scaled for key, e in cells.items()}


@register_figure(
    "simrf-fig8",
    title="SimRF Fig. 8: kernel-regression accuracy vs m/d per UCI data set, IID/ORF/SimRF",
)
def simrf_fig8(results: dict[str, pd.DataFrame]) -> Figure:
    """Test accuracy vs m/d per data set and on average, ±1 s.e. bars, the exact kernel dotted,
    SimRF Table 2's published m = d accuracies as open stars (SimRF Fig. 8)."""
    df = results["simrf-fig8"]
    df = df.assign(m_per_d=df["m_per_d"].astype(float))

    def subtitle(rows: pd.DataFrame) -> str:
        r = rows.iloc[0]
        rf = rows[rows["estimator"] != EXACT]
        return f"d = {int(r['d'])}, σ = {float(r['sigma']):.3g}, {_draws(rf)}"

    fig, panels = accuracy_grid(
        df, "m_per_d", style.coupling_colour, lambda e: paper_name(weights_of(e), "simrf"), subtitle
    )
    padded = df["note"].fillna("").str.contains("padded").any()
    table2 = {} if padded else _paper_table2()
    star = {"marker": "*", "markersize": 6, "markerfacecolor": "none", "linestyle": "none"}
    shown = False
    for ax, ds in zip(panels, dict.fromkeys(df["dataset"]), strict=False):
        for est in estimators(df[df["dataset"] == ds]):
            if (ds, est) in table2:
                ax.plot([1.0], [table2[ds, est]], color=style.coupling_colour(est), **star)
                shown = True
    for ax in panels[::3]:
        ax.set_ylabel("accuracy")
    extra = [(Line2D([], [], color="0.3", **star), "paper Table 2 (m = d)")] if shown else []
    title = "SimRF Fig. 8: kernel-regression classification, Gaussian kernel, positive RFs"
    legend_on_top(fig, panels, f"{title} (mean ± 1 s.e. over draws)", extra=extra)
    fig.supxlabel("no. features m / d", fontsize=8)
    return fig


@register_figure(
    "simrf-fig10",
    title="SimRF Fig. 10: classification accuracy vs σ (choosing σ), IIDRFs at m = 10d and exact",
)
def simrf_fig10(results: dict[str, pd.DataFrame]) -> Figure:
    """Accuracy vs σ per data set: IIDRFs ±1 s.e. and the exact kernel; the σ at the IIDRF peak
    and the σ of the SimRF code as vertical lines (SimRF App. B.1 Fig. 10)."""
    df = results["simrf-fig10"]
    acc = df[df["metric"] == "accuracy"]
    datasets = list(dict.fromkeys(acc["dataset"]))
    ncols = 4 if len(datasets) > 6 else 3
    fig, panels = panel_grid(len(datasets), ncols=ncols, panel_height=1.75)
    chosen = {"color": style.coupling_colour("positive@iid"), "linewidth": 0.8, "alpha": 0.8}
    published = {"color": "0.45", "linestyle": (0, (4, 2)), "linewidth": 0.9}
    for ax, ds in zip(panels, datasets, strict=True):
        part = acc[acc["dataset"] == ds]
        for est in estimators(part):
            line = part[part["estimator"] == est].sort_values("sigma")
            name = paper_name(weights_of(est), "simrf")
            style.se_band(ax, line["sigma"], line, color=style.coupling_colour(est), label=name)
        ex = part[part["estimator"] == EXACT].sort_values("sigma")
        ax.plot(ex["sigma"], ex["value"], label="exact kernel", **EXACT_LINE)
        iid = part[part["estimator"] == "positive@iid"]
        if len(iid):
            best = float(peak_rows(iid, ["estimator"])["sigma"].iloc[0])
            ax.axvline(best, label="σ at the IIDRF peak", **chosen)
        published_sigma = part["sigma_published"].dropna() if "sigma_published" in part else ()
        if len(published_sigma):  # the SimRF code's σ, written by the run
            ax.axvline(float(published_sigma.iloc[0]), label="σ of the SimRF code", **published)
        log_x(ax, [t for t in SIGMA_TICKS if part["sigma"].min() <= t <= part["sigma"].max()])
        ax.set_xlim(part["sigma"].min() / 1.1, part["sigma"].max() * 1.1)
        rf = part[part["estimator"] != EXACT]
        m_d = [f"m = {float(m):g}d" for m in rf["m_per_d"].dropna()[:1]]
        sub = [f"d = {int(part['d'].iloc[0])}", *m_d, _draws(rf)]
        notes = [textwrap.fill(n, 34) for n in dict.fromkeys(part["note"].dropna()) if n]
        title = rf"$\bf{{{ds}}}$" + "\n" + ", ".join(sub) + "".join(f"\n{n}" for n in notes)
        ax.set_title(title, fontsize=6.5)
    for ax in panels[::ncols]:
        ax.set_ylabel("accuracy")
    title = "SimRF Fig. 10: choosing σ, accuracy on the authors' evaluation split"
    legend_on_top(fig, panels, f"{title} (IIDRFs shaded ±1 s.e. over draws)")
    fig.supxlabel("σ (data rescaling x → σx; kernel length scale 1/σ)", fontsize=8)
    return fig


def derf_name(estimator: str) -> str:
    """DERF's name of a mechanism (trig-phase@* is the paper's random-phase TrigRF, trig@* the
    [sin, cos] map; docs/experiments.md#derf-fig3)."""
    component = family_of(estimator)
    own = {"trig": "trig-sincos", "trig-phase": "trig"}.get(component, component)
    return PAPER_NAMES["derf"].get(own, estimator)


@register_figure(
    "derf-fig3", title="DERF Fig. 3: kernel classification test accuracy vs number of features M"
)
def derf_fig3(results: dict[str, pd.DataFrame]) -> Figure:
    """Test accuracy (%) at the tuned σ vs M per data set and on average (DERF Fig. 3); the
    exact kernel at its own tuned σ dotted."""
    df = results["derf-fig3"]  # ``features``: M of each row, written by the runner

    def subtitle(rows: pd.DataFrame) -> str:
        rf = rows[rows["estimator"] != EXACT]
        return f"d = {int(rows['d'].iloc[0])}, {_draws(rf)}"

    fig, panels = accuracy_grid(df, "features", style.colour, derf_name, subtitle, scale=100.0)
    for ax in panels[::3]:
        ax.set_ylabel("test accuracy (%)")
    couplings = sorted({weights_of(e) for e in estimators(df)})
    title = (
        f"DERF Fig. 3: kernel classification, Gaussian kernel, ω: {', '.join(couplings)}, σ tuned "
        "on the validation split\nper (data set, method, M); test accuracy, mean ± 1 s.e. over "
        "draws"
    )
    legend_on_top(fig, panels, title, ncol=7)
    fig.supxlabel("number of features M (TrigRF [sin, cos]: M/2 projections ω)", fontsize=8)
    return fig
