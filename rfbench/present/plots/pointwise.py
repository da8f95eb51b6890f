"""Shared pieces of the pointwise figures (:mod:`~rfbench.present.plots.hrf_pointwise`,
:mod:`~rfbench.present.plots.cse`): curves from the rows, names, the θ axis, bands, log floors.

A *curve* is one (estimator, variant, m, n, r) with its metrics as columns over θ (``<metric>_se``
holds the standard errors)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from rfbench.present.plots import style
from rfbench.present.reference import paper_name

#: Columns naming one curve, in the order used for labels and grouping.
CURVE_KEYS = ("estimator", "variant", "m", "n", "r")
#: Error bands are ±Z_BAND standard errors.
Z_BAND = 2.0
#: Relative errors below this are round-off of an exact estimate (θ = 0 or π): off the log axis.
EXACT = 1e-10

#: Sharing variants of a bipolar hybrid (CSE eq. 11; docs/methods.md#cse): marker and line style.
VARIANT_STYLE = {"independent": ("o", "-"), "shared-base": ("s", "-."), "shared-all": ("D", "-")}


@dataclass(frozen=True)
class Curve:
    """One estimator at one (variant, m, n, r): ``data`` has a row per θ, a column per metric."""

    estimator: str
    variant: str | None
    m: int | None
    n: int | None
    r: float
    data: pd.DataFrame

    def has(self, metric: str) -> bool:
        return metric in self.data and bool(self.data[metric].notna().any())

    def values(self, metric: str) -> np.ndarray:
        return self.data[metric].to_numpy(float)

    def stderr(self, metric: str) -> np.ndarray:
        """The standard errors, 0 (no band) where the sample does not resolve the statistic: its
        closed-form standard error there is astronomically large and says only that."""
        se = self.data.get(f"{metric}_se")
        out = np.zeros(len(self.data)) if se is None else se.fillna(0).to_numpy(float)
        ok = self.data.get(f"{metric}_ok")
        return (
            out if ok is None else np.where(ok.eq(False).to_numpy(bool, na_value=False), 0.0, out)
        )

    @property
    def theta(self) -> np.ndarray:
        return self.data.index.to_numpy(float)


def _clean(value: object) -> object:
    return None if value is None or pd.isna(value) else value


def curves(df: pd.DataFrame) -> list[Curve]:
    """The curves of a pointwise result table, in the order their rows appear."""
    rows = df[df["theta"].notna()]
    keys = [c for c in CURVE_KEYS if c in rows.columns]
    index = [*keys, "theta", "metric"]
    grouped = rows.groupby(index, dropna=False, sort=False)
    value = grouped["value"].first().unstack("metric")
    se = grouped["stderr"].first().unstack("metric").add_suffix("_se")
    wide = value.join(se)
    if "resolved" in rows:
        wide = wide.join(grouped["resolved"].first().unstack("metric").add_suffix("_ok"))
    out = []
    for key, part in wide.groupby(level=keys, dropna=False, sort=False):
        point = {k: _clean(v) for k, v in zip(keys, key, strict=True)}
        data = part.reset_index(level=keys, drop=True).sort_index()
        m, n = (None if point.get(k) is None else int(point[k]) for k in ("m", "n"))
        r = float(point.get("r") or np.nan)
        out.append(Curve(str(point["estimator"]), point.get("variant"), m, n, r, data))
    return out


def unique(items: Iterable[object]) -> list:
    """Distinct items in order of first appearance."""
    return list(dict.fromkeys(items))


def name(estimator: str) -> str:
    """The paper's name of an estimator (the shared style's label otherwise)."""
    return paper_name(estimator, "hrf")


def sizes(curve: Curve) -> str:
    """``m = 128`` or ``m = 16, n = 8``."""
    if curve.m is None:
        return ""
    return f"m = {curve.m}" + (f", n = {curve.n}" if curve.n is not None else "")


def several_variants(items: Sequence[Curve]) -> set[str]:
    """Estimators that appear with more than one sharing variant (their labels name it)."""
    seen: dict[str, set[object]] = {}
    for c in items:
        seen.setdefault(c.estimator, set()).add(c.variant)
    return {e for e, v in seen.items() if len(v) > 1}


def label(curve: Curve, with_variant: bool) -> str:
    """Legend text: the paper's name, and the sharing variant when asked."""
    if with_variant and curve.variant:
        return f"{name(curve.estimator)}, {curve.variant}"
    return name(curve.estimator)


def line_style(curve: Curve) -> dict[str, object]:
    """Colour by estimator family (fixed across figures), marker/line style by sharing variant."""
    mark, ls = VARIANT_STYLE.get(curve.variant or "", (style.marker(curve.estimator), "-"))
    return {"color": style.colour(curve.estimator), "marker": mark, "linestyle": ls}


def theta_axis(ax: Axes, label_it: bool = True) -> None:
    """x axis θ ∈ [0, π] with ticks at multiples of π/4."""
    ticks = np.pi * np.array([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_xticks(ticks, ["0", "π/4", "π/2", "3π/4", "π"])
    ax.set_xlim(-0.05, np.pi + 0.05)
    if label_it:
        ax.set_xlabel("angle θ between x and y (rad)")


def log_floor(values: Sequence[np.ndarray]) -> float:
    """A bottom for a log axis: half the smallest value that is not round-off of an exact 0."""
    flat = np.concatenate([np.ravel(v) for v in values]) if len(values) else np.array([])
    pos = flat[np.isfinite(flat) & (flat > EXACT)]
    return float(pos.min() / 2) if pos.size else EXACT


def band(
    ax: Axes, x: np.ndarray, y: np.ndarray, se: np.ndarray, floor: float | None = None, **line
) -> None:
    """A curve with a ±Z_BAND·stderr band; on a log axis the band is cut at ``floor``."""
    lo, hi = y - Z_BAND * se, y + Z_BAND * se
    if floor is not None:
        lo = np.maximum(lo, floor)
    colour = line.get("color")
    shown = y > EXACT  # no band around an exact (zero-error) point: it would be round-off
    ax.fill_between(x, lo, hi, where=shown, color=colour, alpha=0.2, linewidth=0)
    ax.plot(x, y, **line)


def error_curves(ax: Axes, items: Sequence[Curve], metric: str, theory: bool) -> None:
    """``metric`` vs θ on a log axis for each curve (±2 s.e. band); the closed form dashed."""
    shown = [c for c in items if c.has(metric)]
    varied = several_variants(shown)
    pool = [c.values(metric) for c in shown]
    if theory:
        pool += [c.values("theory_rel_rmse") for c in shown if c.has("theory_rel_rmse")]
    floor = log_floor(pool)
    tops = [c.values(metric) + Z_BAND * c.stderr(metric) for c in shown]
    top = max((float(np.nanmax(v)) for v in [*pool, *tops] if np.isfinite(v).any()), default=1.0)
    for c in shown:
        st = line_style(c)
        band(
            ax, c.theta, c.values(metric), c.stderr(metric), floor=floor,
            label=label(c, with_variant=c.estimator in varied), **st,
        )  # fmt: skip
        if theory and c.has("theory_rel_rmse"):
            ax.plot(c.theta, c.values("theory_rel_rmse"), color=st["color"], **style.THEORY_LINE)
    ax.set(yscale="log", ylim=(floor, max(2 * top, 2 * floor)))
    theta_axis(ax)


def legend_strip(ax: Axes, *rows: Sequence[object]) -> None:
    """An axis holding only legends, one per list of handles, stacked top to bottom; each in
    balanced rows of at most four entries."""
    ax.axis("off")
    rows = tuple(r for r in rows if len(r))
    for i, handles in enumerate(rows):
        lines = -(-len(handles) // 4)
        leg = ax.legend(
            handles=list(handles), loc="center", bbox_to_anchor=(0.5, 1.0 - (i + 0.5) / len(rows)),
            ncol=-(-len(handles) // lines), handlelength=2.0,
        )  # fmt: skip
        ax.add_artist(leg)


def curve_handles(items: Sequence[Curve]) -> list[object]:
    """One legend entry per distinct (estimator, variant) of ``items``, in their style."""
    varied = several_variants(items)
    first: dict[tuple[str, str | None], Curve] = {}
    for c in items:
        first.setdefault((c.estimator, c.variant), c)
    return [
        Line2D([], [], label=label(c, with_variant=c.estimator in varied), **line_style(c))
        for c in first.values()
    ]


def tail_note(items: Sequence[Curve]) -> list[object]:
    """A text-only legend entry naming the estimators whose empirical √MSE lies far (> 2×) below
    the closed form: their error has a heavy right tail that the draws rarely reach."""
    low = []
    for c in items:
        if c.has("theory_rel_rmse") and c.has("rel_rmse"):
            upper = c.values("rel_rmse") + Z_BAND * c.stderr("rel_rmse")
            if np.any(upper < c.values("theory_rel_rmse") / 2):
                low.append(name(c.estimator))
    names = ", ".join(unique(low))
    tail = f"empirical √MSE < ½ closed form for {names}: a heavy right tail the draws rarely reach"
    notes = [note for note in (tail if low else "", zero_note(items)) if note]
    return [Line2D([], [], linestyle="none", label="\n".join(notes))] if notes else []


def tail_height(items: Sequence[Curve]) -> float:
    """Inches of legend strip the notes of :func:`tail_note` take (0.2 a line)."""
    return 0.2 * sum(h.get_label().count("\n") + 1 for h in tail_note(items))


#: a relative error below this fraction of its curve's largest is round-off of an exact 0
ROUND_OFF = 1e-9
#: the relative errors drawn on the pointwise figures' log axes
LOG_METRICS = ("rel_rmse", "rel_mae", "theory_rel_rmse")


def zero_note(items: Sequence[Curve]) -> str:
    """A note naming the estimators whose error is 0 (or its round-off) at some θ (exact at
    θ = 0 or π: a curve there drops off the log axis), or "" when none is."""
    at: dict[str, set[str]] = {}
    for c in items:
        for metric in LOG_METRICS:
            if c.has(metric):
                values = c.values(metric)
                # 0, or round-off of 0 (the axis stops above it): exact there
                zero = values <= ROUND_OFF * np.nanmax(values, initial=0.0)
                for theta in c.theta[zero]:
                    where = "0" if np.isclose(theta, 0) else "π" if np.isclose(theta, np.pi) else ""
                    at.setdefault(name(c.estimator), set()).add(where or f"{theta:.3g}")
    if not at:
        return ""
    angles = sorted({a for v in at.values() for a in v}, key=lambda a: (a != "0", a))
    every = len(at) == len({name(c.estimator) for c in items}) and len(at) > 1
    who = "every curve" if every else ", ".join(at)
    return f"error 0 (exact) at θ = {', '.join(angles)} for {who}: off the log axis there"
