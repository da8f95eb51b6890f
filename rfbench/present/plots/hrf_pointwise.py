"""HRF Fig. 2 and Fig. 5 (Sec. 4.1, App. G): pointwise estimation of SM(x, y) vs the angle θ.

Layout as in the paper: one panel per (r, estimator), rows r, columns trig / FAVOR+ / angular
hybrid / Gaussian hybrid. Left axis: the true SM(x, y) and the 5th–95th percentiles of the s
estimates; right axis: the empirical relative error √MSE/SM (ε_{θ,r} of HRF Def. 3.3) with a ±2 s.e.
band and, added here, its closed form (docs/methods.md#components, docs/experiments.md#hrf-fig2)
dashed. The red dotted line marks zero on both axes (their zeros are aligned). A bottom row overlays
all estimators per r on a log axis, where the paper's claim (smallest max-relative-error for the
angular hybrid) is read off.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from rfbench.present.plots import register_figure, style
from rfbench.present.plots.pointwise import (
    Curve,
    band,
    curves,
    error_curves,
    legend_strip,
    name,
    sizes,
    tail_height,
    tail_note,
    theta_axis,
    unique,
)

ZERO_STYLE = {"color": "red", "linestyle": ":", "linewidth": 1.0}
PANEL_HEIGHT = 1.55  # inches per (r, estimator) row
SUMMARY_HEIGHT = 1.9
KEY_HEIGHT = 0.8  # +0.2 with a tail note


def _left_limits(row: list[Curve]) -> tuple[float, float]:
    """Value axis: from min(0, q05) to max(q95, true), shared along a row (same r)."""
    lo = min(0.0, *(np.nanmin(c.values("q05")) for c in row))
    hi = max(max(np.nanmax(c.values("q95")), np.nanmax(c.values("true"))) for c in row)
    pad = 0.06 * (hi - lo)
    return lo - (pad if lo < 0 else 0.0), hi + pad


def _right_top(row: list[Curve]) -> float:
    """Error axis top: the largest error (empirical or closed form) along the row, raised for the
    ±2 s.e. bands by at most half of it (a band of a heavy-tailed estimator may be far larger)."""
    values = [np.nanmax(c.values("rel_rmse")) for c in row]
    values += [np.nanmax(c.values("theory_rel_rmse")) for c in row if c.has("theory_rel_rmse")]
    bands = max(np.nanmax(c.values("rel_rmse") + 2 * c.stderr("rel_rmse")) for c in row)
    top = max(max(values), 1e-12)
    return 1.08 * min(max(top, bands), 1.5 * top)


def _panel(ax: Axes, twin: Axes, c: Curve) -> None:
    """One (r, estimator) panel: values on ``ax``, relative errors on ``twin``."""
    colour = style.colour(c.estimator)
    t = c.theta
    ax.fill_between(t, c.values("q05"), c.values("q95"), color=colour, alpha=0.22, linewidth=0)
    for q in ("q05", "q95"):
        ax.plot(t, c.values(q), color=colour, linewidth=0.6, alpha=0.8)
    ax.plot(t, c.values("true"), color="black", linewidth=1.3)
    ax.axhline(0.0, **ZERO_STYLE)
    band(
        twin, t, c.values("rel_rmse"), c.stderr("rel_rmse"), color=colour,
        marker=style.marker(c.estimator), linestyle="-", linewidth=1.0,
    )  # fmt: skip
    if c.has("theory_rel_rmse"):
        twin.plot(t, c.values("theory_rel_rmse"), color="0.15", **style.THEORY_LINE)


def _key(ax: Axes, estimators: list[str], items: list[Curve]) -> None:
    """The meaning of each line and colour, in a strip of its own above the panels."""
    grey = "0.45"
    meaning = [
        Line2D([], [], color="black", linewidth=1.3, label="true SM(x, y) (left axis)"),
        Patch(color=grey, alpha=0.35, label="5th–95th percentile of estimates (left)"),
        Line2D(
            [], [], color=grey, marker="o", label="empirical rel. error √MSE/SM ±2 s.e. (right)"
        ),
        style.theory_handle("closed-form relative error (right)"),
        Line2D([], [], label="zero level", **ZERO_STYLE),
    ]
    legend_strip(ax, meaning, [style.handle(e, name(e)) for e in estimators], tail_note(items))


def pointwise_grid(df: pd.DataFrame, title: str) -> Figure:
    """The HRF pointwise figure for every (r, estimator) in ``df`` plus a summary row."""
    all_curves = curves(df)
    estimators = unique(c.estimator for c in all_curves)
    radii = unique(c.r for c in all_curves)
    by = {(c.r, c.estimator): c for c in all_curves}
    ne, nr = len(estimators), len(radii)
    cols = math.lcm(ne, nr)
    we, wr = cols // ne, cols // nr

    key = KEY_HEIGHT + tail_height(all_curves)
    height = key + PANEL_HEIGHT * nr + SUMMARY_HEIGHT + 0.4
    fig = style.figure(style.FULL_WIDTH, height)
    ratios = [key, *([PANEL_HEIGHT] * nr), SUMMARY_HEIGHT]
    gs = fig.add_gridspec(nr + 2, cols, height_ratios=ratios)
    _key(fig.add_subplot(gs[0, :]), estimators, all_curves)

    for i, r in enumerate(radii):
        row = [by[(r, e)] for e in estimators if (r, e) in by]
        lo, hi = _left_limits(row)
        top = _right_top(row)
        for j, est in enumerate(estimators):
            ax = fig.add_subplot(gs[1 + i, j * we : (j + 1) * we])
            twin = style.twin(ax)
            if (r, est) in by:
                _panel(ax, twin, by[(r, est)])
            ax.set_ylim(lo, hi)
            twin.set_ylim(top * lo / hi, top)  # zero at the same height on both axes
            theta_axis(ax, label_it=False)
            if i == 0:
                c = by.get((r, est))
                ax.set_title(f"{name(est)}\n({sizes(c)})" if c else name(est))
            if j == 0:
                ax.set_ylabel(f"r = {r:g}\nSM(x, y)")
            if j == ne - 1:
                twin.set_ylabel("relative error")
            ax.tick_params(labelleft=j == 0, labelbottom=i == nr - 1)
            twin.tick_params(labelright=j == ne - 1)

    for k, r in enumerate(radii):
        ax = fig.add_subplot(gs[nr + 1, k * wr : (k + 1) * wr])
        error_curves(ax, [by[(r, e)] for e in estimators if (r, e) in by], "rel_rmse", True)
        ax.set_title(f"r = {r:g}: all estimators")
        if k == 0:
            ax.set_ylabel("relative error √MSE/SM")
    rmse = df[df["metric"] == "rel_rmse"]
    trials = int(rmse["n_trials"].max()) if len(rmse) else 0
    fig.suptitle(f"{title} (d = {int(df['d'].max())}, s = {trials:,} estimates per angle)")
    return fig


@register_figure(
    "hrf-fig2", title="HRF Fig. 2: pointwise softmax estimation vs angle, r = 1.0 and 1.5"
)
def hrf_fig2(results: dict[str, pd.DataFrame]) -> Figure:
    """HRF Fig. 2 (Sec. 4.1): trig, FAVOR+, angular and Gaussian hybrids at r = 1, 1.5."""
    return pointwise_grid(results["hrf-fig2"], "HRF Fig. 2: pointwise estimation of SM(x, y)")


@register_figure(
    "hrf-fig5",
    title="HRF Fig. 5 (App. G): pointwise softmax estimation vs angle, r = 1.0, 1.25, 1.5",
)
def hrf_fig5(results: dict[str, pd.DataFrame]) -> Figure:
    """HRF Fig. 5 (App. G): the ablation of Fig. 2 over r = 1, 1.25, 1.5."""
    return pointwise_grid(results["hrf-fig5"], "HRF Fig. 5: pointwise estimation of SM(x, y)")
