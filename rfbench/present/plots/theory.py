"""The closed-form theory figures (experiment ``theory``): HRF Fig. 1, SimRF Figs. 4–6
(docs/experiments.md#hrf-fig1, #simrf-fig4, #simrf-fig5, #simrf-fig6)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from rfbench.compute.schema import better
from rfbench.compute.text import weights_of
from rfbench.present.plots import register_figure, style
from rfbench.present.reference import paper_name

#: Black dash-dot: the reference curve of a panel (Fig. 4: the optimum; Fig. 5: f(w, v)).
REFERENCE_LINE = {"color": "black", "linestyle": "-.", "linewidth": 1.0}
#: HRF Fig. 1: MSEs below this are shown as "≈ 0" (exact at r = 0, θ = 0 or π up to round-off).
MSE_FLOOR = 1e-8
#: HRF Fig. 1: the radius of the grey slice (nearest grid value).
SLICE_R = 1.0


def with_coupling(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with a ``coupling`` column: a SimRF row's ``weights``, else the part after ``@``."""
    weights = df["weights"] if "weights" in df else pd.Series(None, index=df.index, dtype=object)
    pairs = zip(df["estimator"], weights, strict=True)
    return df.assign(coupling=[w if isinstance(w, str) and w else weights_of(e) for e, w in pairs])


def simrf_name(estimator: str) -> str:
    """SimRF's name of the coupling of ``estimator`` (e.g. ``positive@orf`` -> ``ORFs``)."""
    return paper_name(weights_of(estimator), "simrf")


def simrf_colour(c: str) -> str:
    """The fixed colour of a coupling (style.COUPLING_COLOURS); black for the optimum."""
    return "black" if c == "optimum" else style.coupling_colour(f"positive@{c}")


def metric(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of one metric."""
    return df[df["metric"] == name]


def _surface(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(θ, r, MSE[r, θ]) of one estimator, r mirrored to [−r_max, r_max] (HRF Fig. 1)."""
    grid = rows.pivot_table(index="r", columns="theta", values="value").sort_index()
    r, z = grid.index.to_numpy(float), grid.to_numpy(float)
    if r[0] == 0.0:
        r, z = np.concatenate([-r[:0:-1], r]), np.vstack([z[:0:-1], z])
    return grid.columns.to_numpy(float), r, z


def _theta_ticks(ax: Axes) -> None:
    ax.set_xticks(np.pi * np.array([0, 0.5, 1.0]), ["0", "π/2", "π"])
    ax.set_xlabel("angle θ (rad)")


@register_figure(
    "hrf-fig1",
    title="HRF Fig. 1: closed-form MSE of SM^trig, SM++ and the angular hybrid over (θ, r)",
)
def hrf_fig1(results: dict[str, pd.DataFrame]) -> Figure:
    """Three log-colour MSE maps over (θ, r), r mirrored to [−r, r] as in the paper, and the
    grey slice at r ≈ SLICE_R drawn as curves (HRF Fig. 1)."""
    df = metric(results["hrf-fig1"], "theory_mse")
    names = list(dict.fromkeys(df["estimator"]))
    surfaces = {e: _surface(df[df["estimator"] == e]) for e in names}
    top = max(np.nanmax(z) for _, _, z in surfaces.values())
    fig = style.figure(style.FULL_WIDTH, 2.7)
    if not top > MSE_FLOOR:  # every MSE ≈ 0: a log scale shows nothing ("the figure has no data")
        return fig
    norm = LogNorm(vmin=MSE_FLOOR, vmax=top)
    cmap = plt.get_cmap("viridis").with_extremes(under="white", bad="white")

    outer = fig.add_gridspec(1, 2, width_ratios=[3.1, 1.2])
    gs = outer[0].subgridspec(2, len(names), height_ratios=[1, 0.05], wspace=0.1, hspace=0.7)
    r_all = next(iter(surfaces.values()))[1]
    r_slice = r_all[r_all >= 0][np.abs(r_all[r_all >= 0] - SLICE_R).argmin()]
    mesh = None
    for k, name in enumerate(names):
        theta, r, z = surfaces[name]
        ax = fig.add_subplot(gs[0, k])
        mesh = ax.pcolormesh(theta, r, z, norm=norm, cmap=cmap, shading="nearest")
        logz = np.log10(np.clip(z, MSE_FLOOR, None))
        levels = np.arange(0, np.log10(top), 10)
        if min(logz.shape) > 1 and len(levels):  # a contour needs a grid, not a line of points
            ax.contour(theta, r, logz, levels=levels, colors="white", linewidths=0.4, alpha=0.7)
        for sign in (-1, 1):
            ax.axhline(sign * r_slice, color="0.55", linewidth=1.4)
        ax.set_title(paper_name(name, "hrf"))
        ax.grid(False)
        _theta_ticks(ax)
        ax.set_ylabel("input norm r (mirrored)" if k == 0 else "")
        ax.tick_params(labelleft=k == 0)
    bar = fig.colorbar(
        mesh, cax=fig.add_subplot(gs[1, : len(names)]), orientation="horizontal", extend="min"
    )
    bar.set_label(f"MSE (log scale; white: < {MSE_FLOOR:g}, i.e. ≈ 0; contours every 10¹⁰)")

    ax = fig.add_subplot(outer[1])
    for name in names:
        theta, r, z = surfaces[name]
        row = z[np.argmin(np.abs(r - r_slice))]
        line = {"color": style.colour(name), "marker": style.marker(name)}
        label = paper_name(name, "hrf")
        every = max(1, len(theta) // 12)
        ax.plot(theta, np.clip(row, MSE_FLOOR, None), markevery=every, label=label, **line)
    ax.set(yscale="log", ylim=(MSE_FLOOR / 3, None))
    ax.axhspan(MSE_FLOOR / 3, MSE_FLOOR, color="0.85", linewidth=0)
    ax.text(np.pi / 2, MSE_FLOOR * 0.6, "MSE ≈ 0", ha="center", va="center", fontsize=6)
    _theta_ticks(ax)
    ax.set(title=f"grey slice: r = {r_slice:g}", ylabel="MSE")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 0.07), fontsize=6, handlelength=1.6)
    m, n = df["m"].dropna(), df["n"].dropna()
    sizes = f"m = {int(m.max())}" + (f", n = {int(n.max())}" if len(n) else "")
    fig.suptitle(f"HRF Fig. 1: softmax-kernel MSE, ‖x‖ = ‖y‖ = r, {sizes} (closed forms)")
    return fig


@register_figure(
    "simrf-fig4",
    title="SimRF Fig. 4: RF-conformity of IIDRFs, ORFs, SimRFs, SimRFs+ and the optimum",
)
def simrf_fig4(results: dict[str, pd.DataFrame]) -> Figure:
    """ρ of one draw of norms vs SimRF+ passes, the other couplings flat, the closed-form E ρ
    dashed (SimRF Fig. 4); below, a zoom on SimRFs, SimRFs+ and the optimum, whose gaps are the
    paper's "marginal" gains."""
    df = results["simrf-fig4"]
    draws = df["rep"].nunique() if "rep" in df and df["rep"].notna().any() else 1
    if draws > 1:
        df = df[df["rep"] == df["rep"].min()]
    df = with_coupling(df)
    conf = metric(df, "rf_conformity")
    plus = conf[conf["coupling"] == "simrf-plus"].sort_values("passes")
    x = plus["passes"].to_numpy(float) if len(plus) else np.array([0.0, 1.0])
    span = np.array([x.min(), x.max()])
    sd = metric(df, "rf_conformity_sd")

    fig = style.figure(style.COLUMN_WIDTH, 3.7)
    gs = fig.add_gridspec(3, 1, height_ratios=[1.6, 1, 0.5])
    top = fig.add_subplot(gs[0])
    zoom = fig.add_subplot(gs[1], sharex=top)
    key = fig.add_subplot(gs[2])
    for ax in (top, zoom):
        for c, value in zip(conf["coupling"], conf["value"], strict=True):
            if c != "simrf-plus":
                line = REFERENCE_LINE if c == "optimum" else {"color": simrf_colour(c)}
                ax.plot(span, [value, value], label=paper_name(c, "simrf"), **line)
            if c == "iid" and len(sd):
                band = (value - sd["value"].iloc[0], value + sd["value"].iloc[0])
                text = f"IIDRFs ±1 sd ({int(sd['n_trials'].iloc[0])} sets)"
                ax.fill_between(span, *band, alpha=0.18, color=simrf_colour(c), lw=0, label=text)
        if len(plus):
            line = {"color": simrf_colour("simrf-plus"), "marker": "v"}
            ax.plot(x, plus["value"], label=paper_name("simrf-plus", "simrf"), **line)
        theory = metric(df, "theory_rf_conformity")
        for c, value in zip(theory["coupling"], theory["value"], strict=True):
            ax.plot(span, [value, value], color=simrf_colour(c), alpha=0.8, **style.THEORY_LINE)
    near = conf[conf["coupling"].isin(["simrf", "simrf-plus", "optimum"])]["value"]
    if len(near):
        lo, hi = near.min(), near.max()
        pad = 0.25 * max(hi - lo, 1e-3 * abs(hi))
        zoom.set_ylim(lo - pad, hi + pad)
    zoom.plot([], [], color="0.3", label="E ρ over the norms (closed form)", **style.THEORY_LINE)
    zoom.set_title(
        f"zoom on SimRFs, SimRFs+ and the optimum ({better('rf_conformity')})", fontsize=7
    )
    top.tick_params(labelbottom=False)
    zoom.set(xlabel="SimRFs+ iterations (full passes)", ylabel="ρ (zoom)")
    zoom.xaxis.get_major_locator().set_params(integer=True)
    top.set_ylabel("RF-conformity ρ")
    key.axis("off")
    key.legend(*zoom.get_legend_handles_labels(), loc="center", ncol=2, fontsize=6)
    d, v = int(df["d"].max()), float(df["v"].max())
    note = "one draw of norms" + (f" (of {draws})" if draws > 1 else "")
    top.set_title(f"SimRF Fig. 4: d = m = {d}, v = {v:g}, {note}")
    return fig


@register_figure(
    "simrf-fig5",
    title="SimRF Fig. 5: densities of w_ij per coupling and the conformity integrand f(w, v)",
)
def simrf_fig5(results: dict[str, pd.DataFrame]) -> Figure:
    """p(w_ij) per coupling (left) and f(w, v) = 0F1(; d/2; v²w²/4) (right, log) (SimRF Fig. 5);
    E f(w_ij, v) per coupling in the legend (the quantity ρ averages)."""
    df = results["simrf-fig5"]
    dens, integrand = metric(df, "density"), metric(df, "conformity_integrand")
    fig, axes = style.new_figure(height=2.5)
    ax = axes[0, 0]
    twin = style.twin(ax)
    f_of = {v: g.sort_values("w") for v, g in integrand.groupby("v")}
    for c, g in with_coupling(dens).groupby("coupling", sort=False):
        g = g.sort_values("w")
        w, p = g["w"].to_numpy(float), g["value"].to_numpy(float)
        label = paper_name(c, "simrf")
        if f_of:  # E f(w_ij, v) at the first v: what ρ averages over the pairs
            f = next(iter(f_of.values()))["value"].to_numpy(float)
            label += f" (E f = {np.trapezoid(p * f, w):.3g})"
        ax.plot(w, p, color=simrf_colour(c), label=label)
        ax.fill_between(w, p, color=simrf_colour(c), alpha=0.08, linewidth=0)
    for v, g in f_of.items():
        twin.plot(g["w"], g["value"], label=f"f(w, v = {v:g}) (right axis)", **REFERENCE_LINE)
    twin.set(yscale="log", ylabel="f(w_ij, v) = 0F1(; d/2; v²w²/4)")
    ax.set(xlabel="w_ij = ‖ω_i + ω_j‖", ylabel="probability density p(w_ij)", ylim=(0, None))
    ax.set_xlim(0, dens["w"].max())
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    title = "E f = ∫ p f dw (ρ averages f)"
    key = twin.legend(
        handles=handles, loc="upper right", fontsize=6, title_fontsize=6, title=title, frameon=True
    )
    key.get_frame().update({"facecolor": "white", "edgecolor": "none", "alpha": 0.9})
    ax.set_title(f"SimRF Fig. 5: distributions over w_ij, d = {int(df['d'].max())}")
    return fig


@register_figure(
    "simrf-fig6", title="SimRF Fig. 6: closed-form MSE ratio to IIDRFs vs v = ‖x + y‖ (PRFs)"
)
def simrf_fig6(results: dict[str, pd.DataFrame]) -> Figure:
    """MSE_X / MSE_IID vs v on a log axis; the v → 0 limits marked at the left (SimRF Fig. 6)."""
    df = metric(results["simrf-fig6"], "mse_ratio")
    fig, axes = style.new_figure(height=2.4)
    ax = axes[0, 0]
    for c, g in with_coupling(df).groupby("coupling", sort=False):
        g = g.sort_values("v")
        pos = g[g["v"] > 0]
        text = "IIDRFs (reference)" if c == "iid" else f"{paper_name(c, 'simrf')} / IIDRFs"
        ax.plot(pos["v"], pos["value"], color=simrf_colour(c), label=text)
        limit = g[g["v"] == 0]["value"]
        if len(limit) and c != "iid":
            v0 = pos["v"].min()
            ax.plot([v0], limit, marker="<", color=simrf_colour(c), clip_on=False)
            text = f"v → 0: {limit.iloc[0]:.4g}"
            offset = {"xytext": (6, 4), "textcoords": "offset points"}
            ax.annotate(text, (v0, limit.iloc[0]), fontsize=6, color=simrf_colour(c), **offset)
    ax.set(xscale="log", ylim=(0, 1.08), xlabel="v = ‖x + y‖")
    ax.set_ylabel("MSE ratio to IIDRFs (closed form)")
    ax.legend(loc="center right")
    d, m = int(df["d"].max()), int(df["m"].max())
    ax.set_title(f"SimRF Fig. 6: PRFs, d = {d}, m = {m} (Eq. 11)")
    return fig
