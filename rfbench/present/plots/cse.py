"""CSE Figs 1–5 (Kachappilly & Powers, Sec. 4; docs/experiments.md#cse): relative error vs angle
of trig, FAVOR+ and the Combined Softmax Estimator, and the negative-estimate counts of Fig. 4."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from rfbench.present.plots import register_figure, style
from rfbench.present.plots.pointwise import (
    EXACT,
    Z_BAND,
    Curve,
    band,
    curve_handles,
    curves,
    error_curves,
    legend_strip,
    line_style,
    name,
    tail_height,
    tail_note,
    theta_axis,
    unique,
)
from rfbench.present.reference import table


def paper_negatives() -> dict[str, int]:
    """CSE Sec. 4, text after Fig. 4: negative estimates among 10,000, per estimator (trig and
    the hybrid; rfbench.present.reference, ids cse-fig4-trig-negatives and
    cse-fig4-cse-negatives)."""
    return {est: int(e.value) for (est,), e in table("cse-fig4", "estimator").items()}


ROWS = (("rel_mae", False, "mean |K̂ − K| / K"), ("rel_rmse", True, "√MSE / K"))
PAPER_TITLES = {
    "cse-fig1": "CSE Fig. 1: relative error vs angle",
    "cse-fig2": "CSE Fig. 2: relative error vs angle for r = 1, 2, 3",
    "cse-fig3": "CSE Fig. 3: relative error vs angle for 64, 128, 256 features",
    "cse-fig5": "CSE Fig. 5: independent random projections for each estimator",
}


def _column_title(split: str | None, value: object, group: list[Curve]) -> str:
    r = unique(c.r for c in group)
    ms = unique(c.m for c in group)
    at_r = f"r = {r[0]:g}" if len(r) == 1 else ""
    at_m = f"m = {ms[0]}" if len(ms) == 1 else ""
    if split == "m":
        return f"m = {value} projections ({at_r})"
    return ", ".join(t for t in (at_r, at_m) if t)


def _variant_ratio(ax: Axes, items: list[Curve], reference: str = "independent") -> None:
    """√MSE of each sharing variant over that of ``reference`` (±2 s.e., delta method; the
    closed-form ratio dashed): HRF Thm 3.1 / CSE Thm 3.1; docs/methods.md#hrf-sharing-variants,
    sharing never increases the MSE."""
    refs = {(c.r, c.m): c for c in items if c.variant == reference}
    for c in items:
        ref = refs.get((c.r, c.m))
        if c.variant in (None, reference) or ref is None:
            continue
        a, b = c.values("rel_rmse"), ref.values("rel_rmse")
        ok = (a > EXACT) & (b > EXACT)
        ratio = np.where(ok, a / np.where(ok, b, 1.0), np.nan)
        rel = np.hypot(
            c.stderr("rel_rmse") / np.where(ok, a, 1), ref.stderr("rel_rmse") / np.where(ok, b, 1)
        )
        st = line_style(c)
        band(ax, c.theta, ratio, np.nan_to_num(ratio * rel), **st)
        if c.has("theory_rel_rmse") and ref.has("theory_rel_rmse"):
            ta, tb = c.values("theory_rel_rmse"), ref.values("theory_rel_rmse")
            good = (ta > EXACT) & (tb > EXACT)
            ax.plot(c.theta[good], ta[good] / tb[good], color=st["color"], **style.THEORY_LINE)
    ax.axhline(1.0, color="0.3", linewidth=0.8)
    theta_axis(ax)
    ax.set(ylabel=f"ratio of √MSE (±{Z_BAND:g} s.e.)", title=f"√MSE relative to {reference}")


def error_figure(df: pd.DataFrame, split: str | None, title: str) -> Figure:
    """Rows: mean |err|/K (the paper's "relative error") and √MSE/K vs θ on log axes, ±2 s.e.,
    with the closed form of √MSE/K dashed (CSE eqs. 44-49; none for the biased shared-all CSE,
    docs/methods.md#cse-erratum-17); one column per ``split`` value. With one column and several
    sharing variants (Fig. 5), a third panel compares the variants."""
    all_curves = curves(df)
    values = unique(getattr(c, split) for c in all_curves) if split else [None]
    k = len(values)
    one = k == 1
    extra = one and len(unique(c.variant for c in all_curves if c.variant)) > 1
    shape = (2, 2 + extra) if one else (3, k)  # one column: the two rows side by side
    key = 0.55 + tail_height(all_curves)
    height = [key, 2.3] if one else [key, 2.0, 2.0]
    fig = style.figure(style.FULL_WIDTH, sum(height) + 0.5)
    gs = fig.add_gridspec(*shape, height_ratios=height)
    legend_strip(
        fig.add_subplot(gs[0, :]),
        [*curve_handles(all_curves), style.theory_handle("closed form √MSE/K")],
        tail_note(all_curves),
    )
    for j, value in enumerate(values):
        group = [c for c in all_curves if split is None or getattr(c, split) == value]
        for i, (metric, theory, ylabel) in enumerate(ROWS):
            ax = fig.add_subplot(gs[1, i] if one else gs[1 + i, j])
            error_curves(ax, group, metric, theory)
            if one or j == 0:
                ax.set_ylabel(f"{ylabel} (±{Z_BAND:g} s.e.)")
            if one or i == 0:
                head = _column_title(split, value, group)
                ax.set_title(f"{head}: {ylabel}" if one else head)
            if not one and i == 0:
                ax.set_xlabel("")
    if extra:
        _variant_ratio(fig.add_subplot(gs[1, 2]), all_curves)
    n = int(df.loc[df["metric"] == "rel_mae", "n_trials"].max())
    if split:  # the settings drawn, not the paper's (a quick run has fewer)
        title = f"{title.split(' for ')[0]} for {split} = {', '.join(f'{v:g}' for v in values)}"
    fig.suptitle(f"{title} (d = {int(df['d'].max())}, {n:,} draws per angle)")
    return fig


def _bars(ax: Axes, counts: pd.DataFrame) -> None:
    """Negative counts per estimator (bars per m side by side), the paper's numbers marked."""
    estimators = unique(counts["estimator"])
    ms = unique(counts["m"])
    width = 0.8 / len(ms)
    top = float((counts["value"] + Z_BAND * counts["stderr"].fillna(0)).max())
    paper = paper_negatives()
    top = max(top, *paper.values()) * 1.25 + 1
    for i, est in enumerate(estimators):
        for k, m in enumerate(ms):
            row = counts[(counts["estimator"] == est) & (counts["m"] == m)]
            if row.empty:
                continue
            value, se = float(row["value"].iloc[0]), float(row["stderr"].fillna(0).iloc[0])
            x = i - 0.4 + width * (k + 0.5)
            ax.bar(
                x, value, width * 0.9, color=style.colour(est), alpha=1.0 - 0.45 * k,
                yerr=Z_BAND * se, capsize=2, error_kw={"linewidth": 0.8},
            )  # fmt: skip
            ax.text(x, value + Z_BAND * se + 0.02 * top, f"{value:.0f}\nm={m}", ha="center",
                    va="bottom", fontsize=6)  # fmt: skip
        if est in paper:
            ref = paper[est]
            ax.hlines(ref, i - 0.45, i + 0.45, color="red", linestyle="--", linewidth=1.2)
    ticks = [
        name(e).replace(" ", "\n", 1) + (f"\n(paper: {paper[e]})" if e in paper else "")
        for e in estimators
    ]
    ax.set_xticks(range(len(estimators)), ticks)
    ax.set(xlim=(-0.55, len(estimators) - 0.45), ylim=(0, top))
    ax.set_ylabel(f"negative estimates among {int(counts['n_trials'].max()):,}")
    ax.set_title(f"count of K̂ < 0 (±{Z_BAND:g} s.e.; red: paper)")


def _fractions(ax: Axes, items: list[Curve], per_angle: int) -> None:
    """Fraction of negative estimates per angle (%), per estimator and m; for trig the exact
    fraction P(K̂ < 0 | θ, m, r) (characteristic-function inversion) dashed, with the exact
    expected count over the plotted angles."""
    ms = unique(c.m for c in items)
    for c in items:
        st = line_style(c)
        if len(ms) > 1 and ms.index(c.m) > 0:
            st = {**st, "linestyle": "--", "marker": "x"}
        label = f"{name(c.estimator)}, m = {c.m}"
        if c.has("theory_neg_fraction"):  # written by the run where a closed form exists
            exact = c.values("theory_neg_fraction")
            ax.plot(c.theta, 100 * exact, color=st["color"], **style.THEORY_LINE)
            label += f" (exact: {exact.sum() * per_angle:.1f} expected)"
        band(
            ax, c.theta, 100 * c.values("neg_fraction"), 100 * c.stderr("neg_fraction"),
            label=label, **st,
        )  # fmt: skip
    theta_axis(ax)
    ax.set(ylim=(0, None), ylabel="negative estimates (% of draws)")
    ax.legend(loc="upper left")
    ax.set_title("fraction K̂ < 0 per angle (dashed: exact)")


@register_figure("cse-fig4", title="CSE Fig. 4: number of negative kernel estimates")
def cse_fig4(results: dict[str, pd.DataFrame]) -> Figure:
    """CSE Fig. 4: negative-estimate counts of trig, FAVOR+ and the CSE (paper: 89, –, 0)."""
    df = results["cse-fig4"]
    fig, axes = style.new_figure(ncols=2, height=2.9)
    _bars(axes[0, 0], df[df["metric"] == "neg_count"])
    per_angle = int(df.loc[df["metric"] == "neg_fraction", "n_trials"].max())
    _fractions(axes[0, 1], curves(df), per_angle)
    angles = df["theta"].dropna().nunique()
    r = ", ".join(f"{v:g}" for v in unique(df["r"].dropna()))
    fig.suptitle(
        f"CSE Fig. 4: negative kernel estimates, r = {r}, d = {int(df['d'].max())}\n"
        f"({angles} angles in [0, π] × {per_angle} independent draws each)"
    )
    return fig


def _register(figure_id: str, split: str | None) -> None:
    @register_figure(figure_id, title=PAPER_TITLES[figure_id])
    def draw(results: dict[str, pd.DataFrame]) -> Figure:
        return error_figure(results[figure_id], split, PAPER_TITLES[figure_id])

    draw.__doc__ = f"{PAPER_TITLES[figure_id]} (CSE Sec. 4; docs/experiments.md#cse)."


for _id, _split in (("cse-fig1", None), ("cse-fig2", "r"), ("cse-fig3", "m"), ("cse-fig5", None)):
    _register(_id, _split)
