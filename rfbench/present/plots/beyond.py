"""Beyond the papers: numerical safety per dtype (``rfbench precision``) and cost
(``rfbench cost``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from rfbench.compute.text import family_of
from rfbench.present.plots import register_figure, style
from rfbench.present.statistics import projection_budget, projection_crossover

DTYPES = ("float64", "float32", "float16", "bfloat16")
FORMS = {
    "naive": "naive exp(ωᵀx − ‖x‖²/2)",
    "stabilised": "FAVOR+ max-stabilised",
    "logspace": "rfbench log-space, cast",
}
DTYPE_COLOURS = {"float64": "#000000", "float32": "#0072B2", "float16": "#D55E00",
                 "bfloat16": "#009E73"}  # fmt: skip
FORM_STYLES = {"naive": ":", "stabilised": "--", "logspace": "-"}
#: distinct colours per component in the cost figure (style's palette shares some)
COST_COLOURS = {"trig": "#D55E00", "positive": "#56B4E9", "hyperbolic": "#0072B2",
                "gerf": "#CC79A7", "sderf": "#8C564B", "angular-hybrid": "#009E73",
                "cluster-hybrid": "#E69F00"}  # fmt: skip
#: one colour per Hadamard coupling in the projection panel of the cost figure
PROJECTION_COLOURS = {"sorf": "#0072B2", "orf-fast": "#56B4E9", "simrf-fast": "#009E73",
                      "fastfood": "#D55E00"}  # fmt: skip
#: r above which the kernel value itself, exp(r²) at θ = 0, exceeds float16's largest number
KERNEL_RANGE = float(np.sqrt(np.log(65504.0)))
SAFETY = LinearSegmentedColormap.from_list("safety", ["#f7f7f7", "#fdae61", "#d7191c", "#67001f"])


def fixed_layout(fig: Figure) -> Figure:
    """Keep the hand-set margins (figure legends, colour bars): ``style.save`` calls
    ``tight_layout``, which would ignore them."""
    fig.tight_layout = lambda *args, **kwargs: None  # type: ignore[method-assign]
    return fig


def _colour(estimator: str) -> str:
    return COST_COLOURS.get(family_of(estimator)) or style.colour(estimator)


def _components(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(family_of(e) for e in df["estimator"]))


@register_figure(
    "beyond-precision",
    title="Beyond: numerical-safety map, non-finite kernel estimates per dtype, form and r",
)
def precision_map(results: dict[str, pd.DataFrame]) -> Figure:
    """Heatmaps of the non-finite fraction (worst angle, worst coupling): rows forms, columns
    dtypes; cells component × r."""
    df = results["beyond-precision"]
    df = df.assign(component=df["estimator"].map(family_of))
    rows = df[df["metric"] == "nonfinite_fraction"]
    attention = df[df["metric"] == "attn_nonfinite_fraction"]
    comps, radii = _components(rows), sorted(rows["r"].unique())
    dtypes = [d for d in DTYPES if d in set(rows["dtype"])]
    forms = [f for f in FORMS if f in set(rows["form"])]
    fig, axes = style.new_figure(ncols=len(dtypes), nrows=len(forms), height=1.55)
    fig.set_figheight(1.55 * len(forms) + 1.0)
    image = None
    for i, form in enumerate(forms):
        for j, dtype in enumerate(dtypes):
            ax = axes[i, j]
            here = rows[(rows["form"] == form) & (rows["dtype"] == dtype)]
            grid = here.pivot_table(index="component", columns="r", values="value", aggfunc="max")
            grid = grid.reindex(index=comps, columns=radii)
            image = ax.imshow(grid.to_numpy(float), cmap=SAFETY, vmin=0, vmax=1, aspect="auto")
            for (a, b), v in np.ndenumerate(grid.to_numpy(float)):
                if 0 < v < 0.01:
                    ax.plot(b, a, "o", color="#d7191c", ms=1.8)
                elif v > 0:
                    text = "1" if v >= 0.995 else f"{v:.2f}".lstrip("0")
                    ax.text(b, a, text, ha="center", va="center", fontsize=4.5,
                            color="white" if v > 0.5 else "black")  # fmt: skip
            attn = attention[(attention["form"] == form) & (attention["dtype"] == dtype)]
            bad = attn.pivot_table(index="component", columns="r", values="value", aggfunc="max")
            bad = bad.reindex(index=comps, columns=radii).fillna(0).to_numpy(float)
            for a, b in zip(*np.nonzero(bad > 0), strict=True):
                ax.plot(b + 0.32, a - 0.28, "v", color="#2b83ba", ms=2.6, mec="white", mew=0.3)
            if dtype == "float16" and radii[0] < KERNEL_RANGE < radii[-1]:
                at = np.interp(KERNEL_RANGE, radii, np.arange(len(radii)))
                ax.axvline(at, color="0.35", lw=0.6, ls="--")
                if i == 1:
                    ax.text(at - 0.15, (len(comps) - 1) / 2, "K(x, x) = exp(r²) > 65504 →",
                            rotation=90, fontsize=5, ha="right", va="center",
                            color="0.3")  # fmt: skip
            ax.grid(False)
            labels = [f"{r:g}" if float(r).is_integer() else "" for r in radii]
            ax.set_xticks(range(len(radii)), labels, fontsize=5.5)
            ax.set_yticks(range(len(comps)), comps if j == 0 else [], fontsize=6)
            if i == 0:
                ax.set_title(dtype, fontsize=8, fontweight="bold")
            if j == 0:
                ax.set_ylabel(FORMS[form], fontsize=6.5)
    fig.supxlabel("input norm r = ‖x‖ = ‖y‖", fontsize=8, x=0.5, y=0.01)
    bar = fig.colorbar(image, ax=axes, shrink=0.6, pad=0.02, fraction=0.03)
    bar.set_label("non-finite fraction of K̂ (worst θ, worst coupling; • below 1%)\n"
                  "▼ some attention rows D̂⁻¹Â non-finite", fontsize=6.5)  # fmt: skip
    m, d = int(projection_budget(df).max()), int(df["d"].max())
    fig.suptitle(
        f"Which random-feature maps overflow? softmax kernel exp(xᵀy), M = {m}, d = {d}", fontsize=9
    )
    fig.subplots_adjust(left=0.13, right=0.86, top=0.9, bottom=0.09, wspace=0.08, hspace=0.18)
    return fixed_layout(fig)


@register_figure(
    "beyond-precision-error",
    needs=["beyond-precision"],
    title="Beyond: error a dtype adds to kernel estimates and attention rows, per form and r",
)
def precision_error(results: dict[str, pd.DataFrame]) -> Figure:
    """Per component: the error the dtype adds to K̂ in units of its Monte Carlo RMSE (left) and
    attention TV (right) vs r, median over angles; colour dtype, line style form; iid coupling."""
    df = results["beyond-precision"]
    df = df[df["weights"].fillna("iid") == "iid"] if (df["weights"] == "iid").any() else df
    rows = df.assign(component=df["estimator"].map(family_of))
    comps = _components(rows)
    panels = (("dtype_to_mc", "kernel: |K̂_dtype − K̂_float64| / Monte Carlo RMSE\n"
                               "(grey: 1, the dtype costs as much as sampling)"),
              ("attn_tv", "attention rows: total variation vs softmax\n"
                          "(signed maps: weights < 0, TV > 1 possible)"))  # fmt: skip
    fig, axes = style.new_figure(ncols=2, nrows=len(comps), width=style.FULL_WIDTH, height=1.25)
    fig.set_figheight(1.25 * len(comps) + 1.05)
    for j, (metric, label) in enumerate(panels):
        # the median over angles (and couplings), not the worst angle: that is often one where
        # the estimator has no variance (θ = π for positive maps, 0 for trig)
        here = rows[rows["metric"] == metric]
        typical = here.groupby(["component", "dtype", "form", "r"], as_index=False)[
            "value"
        ].median()
        for i, comp in enumerate(comps):
            ax = axes[i, j]
            for dtype in DTYPES:
                for form, ls in FORM_STYLES.items():
                    line = typical[(typical["component"] == comp) & (typical["dtype"] == dtype)
                                   & (typical["form"] == form)].sort_values("r")  # fmt: skip
                    values = line["value"].where(line["value"] > 0)  # float64 log-space: exact
                    ax.plot(line["r"], values, ls, color=DTYPE_COLOURS[dtype], lw=1.0)
            if metric == "dtype_to_mc":
                ax.axhline(1.0, color="0.5", lw=0.8, zorder=0)
            ax.set_yscale("log")
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_ylabel(comp, fontsize=7)
            if i == 0:
                ax.set_title(label, fontsize=7.5)
            if i == len(comps) - 1:
                ax.set_xlabel("input norm r")
            ax.tick_params(labelbottom=i == len(comps) - 1)
    handles = [Line2D([], [], color=c, label=d) for d, c in DTYPE_COLOURS.items()]
    handles += [Line2D([], [], color="0.3", ls=ls, label=FORMS[f]) for f, ls in FORM_STYLES.items()]
    fig.legend(handles=handles, loc="upper center", ncol=4, bbox_to_anchor=(0.5, 0.975),
               fontsize=6.5)  # fmt: skip
    fig.suptitle("Error added by low precision (median over angles, iid coupling; gaps: all "
                 "non-finite)", fontsize=9, y=0.995)  # fmt: skip
    fig.subplots_adjust(left=0.1, right=0.98, top=1 - 0.9 / fig.get_figheight(), bottom=0.06,
                        hspace=0.12, wspace=0.18)  # fmt: skip
    return fixed_layout(fig)


def _error(df: pd.DataFrame) -> pd.DataFrame:
    """Per (estimator, budget M): the closed-form error where present, else the empirical one."""
    err = df[df["metric"].isin(["theory_rms_rel_frob", "rms_rel_frob"])]
    wide = err.pivot_table(index=["estimator", "M"], columns="metric", values="value")
    theory = wide.get("theory_rms_rel_frob", pd.Series(np.nan, index=wide.index))
    return theory.fillna(wide["rms_rel_frob"]).rename("error")


@register_figure(
    "beyond-cost",
    title="Beyond: error vs wall time and FLOPs; where random-feature attention beats exact",
)
def cost_figure(results: dict[str, pd.DataFrame]) -> Figure:
    """Error vs time, error vs FLOPs (draw included), crossover L* vs d, and structured vs dense
    projection time vs d (if measured)."""
    df = results["beyond-cost"]
    front = df[df["part"] == "frontier"]
    front = front.assign(M=projection_budget(front))
    total = front[front["step"] == "total"]
    err = _error(front)
    projection = df[(df["part"] == "projection") & (df["metric"] == "time_s")]
    ncols = 4 if len(projection) else 3
    width = style.FULL_WIDTH * 4 / 3 if ncols == 4 else style.FULL_WIDTH
    fig, axes = style.new_figure(ncols=ncols, width=width, height=3.6)
    estimators = list(dict.fromkeys(front["estimator"]))
    for ax, metric, xlabel in (
        (axes[0, 0], "time_s", "seconds (per-step minima): draw + maps + ΦΨᵀ"),
        (axes[0, 1], "flops", "FLOPs (model): draw + maps + ΦΨᵀ"),
    ):
        x = total[total["metric"] == metric].set_index(["estimator", "M"])["value"]
        for est in estimators:
            pts = pd.concat([x.loc[est], err.loc[est]], axis=1, join="inner").sort_index()
            ax.plot(pts.iloc[:, 0], pts["error"], color=_colour(est), marker=style.marker(est),
                    label=est)  # fmt: skip
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels collide
        ax.set(yscale="log", ylabel="RMS relative Frobenius error")
        ax.set_xlabel(xlabel, fontsize=6.5)
    cross = df[(df["part"] == "crossover") & (df["metric"] == "crossover_L")]
    ax = axes[0, 2]
    for est in estimators:
        line = cross[cross["estimator"] == est].sort_values("d")
        ax.plot(line["d"], line["value"], color=_colour(est), marker=style.marker(est))
    ds = np.array(sorted(cross["d"].unique()), float)
    if len(ds):
        ax.plot(ds, 18 * ds * np.log(ds), "k:", lw=1.2, label="L = 18·d·ln d (a folk rule)")
        ax.legend(loc="upper left", fontsize=6)
    ax.set_xscale("log", base=2)
    ax.set(yscale="log", xlabel="head dimension d (= d_v)")
    target = cross["target"].dropna()
    eps = f"{target.iloc[0]:g}" if len(target) else "?"
    ax.set_ylabel(f"crossover length L* (error {eps})")
    d, r = int(front["d"].max()), front["r"].max()
    budgets = ", ".join(str(int(m)) for m in sorted(front["M"].unique()))
    axes[0, 0].set_title(f"error vs wall time (M = {budgets})")
    axes[0, 1].set_title("error vs FLOPs")
    axes[0, 2].set_title("RF attention is cheaper for L > L*")
    if len(projection):
        _projection_panel(axes[0, 3], df)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=6, bbox_to_anchor=(0.5, 0))
    n = int(front["points"].max()) if "points" in front else 0
    fig.suptitle(f"Cost of random-feature softmax estimators: {n}×{n} Gram matrix, d = {d}, "
                 f"‖x‖ = {r:g}, the draw included", fontsize=9)  # fmt: skip
    fig.subplots_adjust(
        left=0.07, right=0.99, top=0.86, bottom=0.32, wspace=0.35 if ncols == 3 else 0.42
    )
    return fixed_layout(fig)


def _projection_panel(ax, df: pd.DataFrame) -> None:
    """Structured (solid) vs dense (dashed) projection time against d per Hadamard coupling,
    the crossover dimension marked by a vertical line."""
    rows = df[(df["part"] == "projection") & (df["metric"] == "time_s")]
    cross = projection_crossover(df).set_index("weights")["crossover_d"]
    for weights, group in rows.groupby("weights", sort=False):
        colour = PROJECTION_COLOURS.get(weights, "#000000")
        wide = group.pivot_table(index="d", columns="step", values="value").sort_index()
        ax.plot(wide.index, wide["structured"], color=colour, marker=style.marker(f"x@{weights}"),
                label=f"{weights} structured")  # fmt: skip
        ax.plot(wide.index, wide["dense"], color=colour, ls="--", lw=1)
        if np.isfinite(cross.get(weights, np.nan)):
            ax.axvline(cross[weights], color=colour, ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set(yscale="log", xlabel="d (m = d′ projections)", ylabel="seconds for ωᵀx")
    points = int(rows["points"].max())
    title = f"ωᵀx of {points} inputs: structured (solid)\nvs dense (dashed), crossover (dotted)"
    ax.set_title(title, fontsize=7)
    ax.legend(loc="upper left", fontsize=5)
