"""DERF variance figures (experiment ``variance``): DERF Fig. 1 (right) and Fig. 2, closed forms
with the Monte Carlo check (docs/experiments.md#derf-fig2; the metric: #derf-a1, #derf-a2)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from rfbench.present import reference
from rfbench.present.plots import register_figure, style
from rfbench.present.reference import PAPER_NAMES

#: The paper's panel order (DERF §5.1); other regimes follow in the order of the results.
REGIME_ORDER = ("normal", "sphere", "heterogen", "mnist", "cifar10", "mnist/cifar10")
#: Mechanism -> DERF's name; also the legend order.
DERF_NAMES = PAPER_NAMES["derf"]
#: Mechanisms the paper does not plot: dashed, and said so in the legend.
NOT_IN_PAPER = ("saderf", "trig-sincos")
#: Main metric name -> y-axis label (rfbench.compute.schema.VARIANCE_METRICS).
METRIC_LABELS = {
    "log_rel_var": "mean log(Var K̂ / K²)",
    "log_var_over_k": "mean log(Var K̂ / K)",
    "log_mean_rel_var": "log mean(Var K̂ / K²)",
    "log_mean_var_over_k": "log mean(Var K̂ / K)",
}
#: Inches of a figure taken by the suptitle, the legend band under it and the shared x label.
FRAME_HEIGHT = 1.0
#: The GERF − SDERF arrow is drawn when the gap exceeds this fraction of the y-range.
ARROW_MIN = 0.08
FOOTNOTE_MARKS = ("†", "‡", "§", "¶")
MC, MC_THEORY, SKIPPED = "log_rel_var_mc", "log_rel_var_mc_theory", "skipped"
#: the Monte Carlo check's markers (and their legend entry)
MC_MARKER = {"linestyle": "none", "markeredgecolor": "black", "markeredgewidth": 0.4}


def panel_grid(n: int, ncols: int, panel_height: float) -> tuple[Figure, list[Axes]]:
    """``style.new_figure`` with ``n`` panels in rows of ``ncols`` (spare cells removed), plus
    :data:`FRAME_HEIGHT` inches for the suptitle, the legend band and the shared x label."""
    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    width = style.FULL_WIDTH
    fig, axes = style.new_figure(ncols=ncols, nrows=nrows, width=width, height=panel_height)
    fig.set_figheight(panel_height * nrows + FRAME_HEIGHT)
    panels = list(axes.ravel())
    for ax in panels[n:]:
        fig.delaxes(ax)
    return fig, panels[:n]


def legend_handles(panels: Sequence[Axes], extra: Sequence[tuple[object, str]] = ()):
    """Unique entries over the panels in drawing order, references (exact kernel, σ lines) last,
    then ``extra`` (handle, label) pairs: (handles, labels)."""
    entries = style.legend_entries(panels)
    curves = [(lab, h) for lab, h in entries.items() if not isinstance(h, Line2D)]
    lines = [(lab, h) for lab, h in entries.items() if isinstance(h, Line2D)]
    ordered = curves + lines + [(lab, h) for h, lab in extra]
    return [h for _, h in ordered], [lab for lab, _ in ordered]


def legend_on_top(
    fig: Figure, panels: Sequence[Axes], title: str, ncol: int = 0, extra: Sequence = ()
) -> None:
    """Suptitle, then the figure legend of ``panels`` (:func:`legend_handles`; in at most ``ncol``
    columns, 0: one row) in a band under it that the tight layout keeps free.

    ``style.save`` runs ``tight_layout``, which ignores figure legends but reserves the
    suptitle's height: the suptitle gets blank lines as tall as the legend, which sits there.
    """
    handles, labels = legend_handles(panels, extra)
    ncol = min(len(labels), ncol or len(labels))
    rows = -(-len(labels) // max(1, ncol))
    title_size = 8.0
    line = 1.2 * title_size  # points per suptitle line
    legend_height = rows * 1.4 * plt.rcParams["legend.fontsize"] + 2.0
    blank = max(1, round(legend_height / line))
    fig.suptitle(title + "\n" * blank, fontsize=title_size, y=0.995)
    height = fig.get_figheight() * 72.0
    top = 0.995 - (line * title.count("\n") + line + 1.0) / height
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, top), ncol=ncol,
               handlelength=2.2, columnspacing=1.2, borderaxespad=0.0, borderpad=0.2)  # fmt: skip


def empty_panel(ax: Axes, title: str, reason: str) -> None:
    """A panel that could not be drawn, with the reason in it."""
    ax.set_title(title)
    ax.text(0.5, 0.5, textwrap.fill(reason, 34), ha="center", va="center", fontsize=6,
            color="0.35", transform=ax.transAxes)  # fmt: skip
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)


def ordered(values: pd.Series, order: Sequence[str]) -> list[str]:
    """The distinct values (not empty), those in ``order`` first: the regimes of the run
    (computed or skipped) in the paper's order, the mechanisms in DERF's."""
    seen = [v for v in dict.fromkeys(values.dropna()) if v]
    return [v for v in order if v in seen] + [v for v in seen if v not in order]


def line_style(mech: str) -> dict[str, object]:
    """Colour by mechanism (style.colour); SADERF and other extras dashed. Earlier mechanisms
    are drawn wider, so that curves that coincide (e.g. GERF and ADERF on cifar10) stay visible."""
    dashed = mech in NOT_IN_PAPER
    rank = list(DERF_NAMES).index(mech) if mech in DERF_NAMES else len(DERF_NAMES)
    return {
        "color": style.colour(mech),
        "linestyle": (0, (4, 2)) if dashed else "-",
        "linewidth": max(1.0, 1.8 - 0.15 * rank),
    }


def _notes(rows: pd.DataFrame) -> list[str]:
    """How a regime's sets were drawn where that deviates from the paper (column ``note``)."""
    return [n for n in dict.fromkeys(rows["note"].dropna()) if n]


def _mc_check_text(rows: pd.DataFrame) -> str | None:
    """'MC − closed form at σ = s: ≤ z s.e.' over mechanisms (the same subsample of pairs)."""
    mc = rows[rows["metric"] == MC].set_index(["mechanism", "sigma"])
    th = rows[rows["metric"] == MC_THEORY].set_index(["mechanism", "sigma"])
    both = mc.join(th["value"].rename("theory"), how="inner")
    if both.empty:
        return None
    z = (both["value"] - both["theory"]).abs() / both["stderr"]
    sig = both.index.get_level_values("sigma")
    where = f"σ = {sig.min():g}" if sig.min() == sig.max() else f"σ ≤ {sig.max():g}"
    return f"|MC − closed form| at {where} ≤ {z.max():.1f} s.e."


def variance_panel(
    ax: Axes, df: pd.DataFrame, regime: str, metric: str, mark: str = "",
    paper_gap: float | None = None,
) -> bool:  # fmt: skip
    """One regime: closed-form curves vs σ, the GERF − SDERF gap, MC check markers, or the
    reason it was skipped. ``mark`` (a footnote symbol) is appended to the regime's name.
    Returns whether there was anything to draw."""
    rows = df[df["regime"] == regime]
    skipped = rows[rows["metric"] == SKIPPED]
    main = rows[rows["metric"] == metric]
    if main.empty:
        reason = "; ".join(dict.fromkeys(skipped["note"].dropna())) or "no results"
        empty_panel(ax, rf"$\bf{{{regime}}}$", reason)
        return False
    for mech in ordered(main["mechanism"], list(DERF_NAMES)):
        line = main[main["mechanism"] == mech].sort_values("sigma")
        ls = line_style(mech)
        name = DERF_NAMES.get(mech, mech) + (" (not in paper)" if mech in NOT_IN_PAPER else "")
        style.se_band(ax, line["sigma"], line, **ls, label=name)
        mc = rows[(rows["metric"] == MC) & (rows["mechanism"] == mech)]
        if len(mc) and metric == "log_rel_var":  # the MC check is a mean of log(MSE/K²)
            est = mc["estimator"].iloc[0]
            ax.errorbar(mc["sigma"], mc["value"], mc["stderr"], color=ls["color"],
                        marker=style.marker(est), markersize=3.5, capsize=1.5, elinewidth=0.8,
                        zorder=5, **MC_MARKER)  # fmt: skip
    lines = [rf"$\bf{{{regime}}}${mark}", _mc_check_text(rows), mark_gap(ax, main, paper_gap)]
    ax.set_title("\n".join(line for line in lines if line), fontsize=6.5)
    return True


def paper_gaps(figure_id: str) -> dict[str, float]:
    """Regime -> the paper's log variance ratio GERF / SDERF ("about e^k";
    rfbench.present.reference)."""
    return {
        e.match["regime"]: e.scaled
        for e in reference.by_figure(figure_id)
        if isinstance(e, reference.NumberEntry)
        and e.match.get("estimator") == "gerf@iid"
        and e.match.get("baseline") == "sderf@iid"
        and "regime" in e.match
    }


def mark_gap(ax: Axes, rows: pd.DataFrame, paper: float | None) -> str | None:
    """A double arrow from SDERF to GERF where their gap is largest (the variance ratio; DERF
    §5.1 "about e^k times better"); returns the title line with the paper's k."""
    table = rows.pivot_table(index="sigma", columns="mechanism", values="value")
    if not {"gerf", "sderf"} <= set(table.columns):
        return None
    s = float((table["gerf"] - table["sderf"]).idxmax())
    hi, lo = float(table.at[s, "gerf"]), float(table.at[s, "sderf"])
    low, high = ax.get_ylim()
    if hi - lo > ARROW_MIN * (high - low):  # a shorter arrow is only its two heads
        ax.annotate("", xy=(s, lo), xytext=(s, hi),
                    arrowprops={"arrowstyle": "<->", "color": "black", "lw": 0.8,
                                "shrinkA": 0, "shrinkB": 0})  # fmt: skip
    text = f"GERF/SDERF: e$^{{{hi - lo:.1f}}}$ at σ = {s:g}"
    return text + (f" (paper ≈ e$^{{{paper:g}}}$)" if paper is not None else "")


def variance_figure(
    df: pd.DataFrame, figure_id: str, title: str, ncols: int, panel_height: float = 1.9
) -> Figure:
    """Panels for every regime of ``df`` with a shared legend (Fig. 1 right and Fig. 2)."""
    present = [m for m in METRIC_LABELS if (df["metric"] == m).any()]  # the closed-form metric
    if not present:
        raise ValueError(
            f"no variance metric in the results (expected one of {list(METRIC_LABELS)})"
        )
    metric = present[0]
    main = df[df["metric"] == metric]
    names = ordered(df["regime"], REGIME_ORDER)
    notes = {r: _notes(main[main["regime"] == r]) for r in names}
    symbols = dict(zip(dict.fromkeys(sum(notes.values(), [])), FOOTNOTE_MARKS, strict=False))
    fig, panels = panel_grid(len(names), ncols=ncols, panel_height=panel_height)
    paper = paper_gaps(figure_id)
    for k, (ax, regime) in enumerate(zip(panels, names, strict=True)):
        mark = "".join(symbols.get(n, "") for n in notes[regime])
        drawn = variance_panel(ax, df, regime, metric, mark, paper.get(regime))
        if drawn and k % ncols == 0:
            ax.set_ylabel(METRIC_LABELS[metric])
    row = main.iloc[0]
    title = (
        f"{title}: softmax kernel, M = 1, d = {int(row['d'])}, L = {int(row['points'])} "
        f"points per set, {int(row['n_trials'])} set pairs (closed form, shaded ±1 s.e.)"
    )
    mc = Line2D([], [], color="0.5", marker="o", **MC_MARKER)
    extra = [(mc, "Monte Carlo ±1 s.e.")] if (df["metric"] == MC).any() else []
    legend_on_top(fig, panels, title, ncol=4 if ncols < 3 else 7, extra=extra)
    foot = [f"{sym} {textwrap.fill(note, 110)}" for note, sym in symbols.items()]
    fig.supxlabel("\n".join(["σ (scale of the sets: x → σx, y → σy)", *foot]), fontsize=7)
    return fig


@register_figure(
    "derf-fig2",
    title="DERF Fig. 2: log relative variance vs σ per regime, closed form + Monte Carlo check",
)
def derf_fig2(results: dict[str, pd.DataFrame]) -> Figure:
    """Log relative variance of TrigRF/PosRF/GERF/ADERF/SDERF(/SADERF) vs σ, one panel per
    regime (DERF Fig. 2, docs/experiments.md#derf-fig2)."""
    return variance_figure(results["derf-fig2"], "derf-fig2", "DERF Fig. 2", ncols=3)


@register_figure(
    "derf-fig1",
    title="DERF Fig. 1 (right): log relative variance vs σ on cifar10 and mnist/cifar10",
)
def derf_fig1(results: dict[str, pd.DataFrame]) -> Figure:
    """DERF Fig. 1 right: the image regimes, with the GERF − SDERF gap at the largest σ."""
    return variance_figure(results["derf-fig1"], "derf-fig1", "DERF Fig. 1 (right)", ncols=2,
                           panel_height=2.3)  # fmt: skip
