"""A figure for any result file, so every run ends in a picture: the neutral plot data of
:func:`rfbench.present.plots.choose.plot_data` drawn with matplotlib, written beside the result file
as ``<name>.png`` (replacing only a PNG that rfbench drew)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

from rfbench.compute.results import atomic_write, load_results
from rfbench.present.outputs import SOFTWARE
from rfbench.present.plots.choose import plot_data
from rfbench.present.plots.series import (
    BASELINE,
    LEVEL,
    MAX_BANDS,
    MEASURED,
    THEORY,
    Panel,
    PlotData,
    Series,
)
from rfbench.present.plots.style import THEORY_LINE, apply, theory_handle


class NotOurs(Exception):
    """The figure's path holds a file rfbench did not draw: it is left alone."""


def _check_ours(path: Path) -> None:
    if path.is_symlink():
        raise NotOurs(f"{path} is a symbolic link")
    if not path.exists():
        return
    from PIL import Image

    try:
        with Image.open(path) as img:
            software = img.info.get("Software", "")
    except Exception as exc:  # noqa: BLE001 - any unreadable file is not ours
        raise NotOurs(f"{path} exists and is not an image rfbench drew") from exc
    if software != SOFTWARE:
        raise NotOurs(f"{path} exists and was not drawn by rfbench")


def draw_result(path: str | Path) -> Path | None:
    """Draw ``<result>.png`` beside the result file ``path``; its path, or None when nothing
    varies (a single point: the summary table says it all).

    Raises :class:`NotOurs` if a file rfbench did not draw is in the way.
    """
    path = Path(path)
    data = plot_data(load_results(path))
    if data is None:
        return None
    out = path.with_suffix(".png")
    _check_ours(out)
    fig = render(data)
    atomic_write(out, lambda tmp: fig.savefig(tmp, format="png", dpi=130, bbox_inches="tight",
                                              metadata={"Software": SOFTWARE}))  # fmt: skip
    plt.close(fig)
    return out


#: panels per row; inches per panel
COLUMNS, PANEL_WIDTH, PANEL_HEIGHT = 3, 3.6, 2.7
#: dotted and dash-dotted lines for baselines, in turn
BASELINE_STYLES = (":", "-.", (0, (1, 3)), (0, (5, 1, 1, 1)))
#: inches of figure height per legend entry (the legend must not be cut off), per category row
LEGEND_ROW, CATEGORY_ROW = 0.17, 0.2
#: a log x axis with at most this many distinct values is ticked at them
MAX_DATA_TICKS = 8
#: legend entries per column of the legend; inches of figure width per legend column
LEGEND_COLUMN, LEGEND_WIDTH = 20, 1.8


def render(data: PlotData):
    """A matplotlib Figure of ``data``: a grid of panels sharing one legend outside the axes."""
    apply()
    n = len(data.panels)
    ncols = min(COLUMNS, n)
    nrows = -(-n // ncols)
    categorical = data.categorical
    panel_height = PANEL_HEIGHT
    if categorical:  # estimators down the side, one row each: names read horizontally
        panel_height = max(PANEL_HEIGHT, 0.6 + CATEGORY_ROW * len(_categories(data.panels[0])))
    entries = len(data.legend_entries()) + 1
    legend_columns = 1 + entries // LEGEND_COLUMN
    width = PANEL_WIDTH * ncols * (1.4 if n == 1 else 1.0) + LEGEND_WIDTH * legend_columns
    height = max(panel_height * nrows, LEGEND_ROW * (entries / legend_columns + 3))
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(width, height), squeeze=False, layout="constrained",
        sharey=nrows * ncols > 1 and _one_scale(data),
    )  # fmt: skip
    for ax, panel in zip(axes.flat, data.panels, strict=False):
        bands = data.spread and sum(s.kind == MEASURED for s in panel.series) <= MAX_BANDS
        if categorical:
            _draw_categories(ax, panel, bands)
        styles = itertools.cycle(BASELINE_STYLES)
        for s in [] if categorical else panel.series:
            _draw(ax, s, next(styles) if s.kind in (BASELINE, LEVEL) else "-", bands)
        ax.set_title(_plain_text(panel.title), fontsize=8)
        _axes(ax, data)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    value_label, side_label = (data.y_label, "") if categorical else (data.x_label, data.y_label)
    for ax in axes[-1, :]:
        ax.set_xlabel(_plain_text(value_label))
    for ax in axes[:, 0]:
        ax.set_ylabel(_plain_text(side_label))
    fig.suptitle(_plain_text(data.title), fontsize=9)
    _legend(fig, data)
    if data.notes:
        notes = _plain_text("\n".join(data.notes))
        fig.text(0.0, 0.0, notes, fontsize=6, color="0.35", ha="left", va="top",
                 transform=fig.transFigure)  # fmt: skip
    return fig


#: panels share their value axis unless one of them spans less than this share of all of them
MIN_SHARED_SPAN = 0.25


def _one_scale(data: PlotData) -> bool:
    """Whether the panels share one value axis: yes on a categorical chart (the rows are the same
    estimators) or a log axis cut to its informative range; otherwise unless a panel's values
    (with their bounds; decades on a log axis) span less than :data:`MIN_SHARED_SPAN` of all the
    panels' together, where one scale would flatten its curves (classification accuracy at 0.14 on
    one data set and 0.9 on another)."""
    if data.categorical or data.y_range is not None:
        return True
    spans = []
    for panel in data.panels:
        values = [
            v
            for s in panel.series
            for v in (*s.y, *(s.lo or ()), *(s.hi or ()))
            if v is not None and math.isfinite(v) and (v > 0 or not data.y_log)
        ]
        if values:
            low, high = min(values), max(values)
            spans.append((math.log10(low), math.log10(high)) if data.y_log else (low, high))
    if len(spans) < 2:
        return True
    whole = max(h for _, h in spans) - min(lo for lo, _ in spans)
    return all(h - lo >= MIN_SHARED_SPAN * whole for lo, h in spans if h > lo)


def _plain_text(text: str) -> str:
    """Text shown as written: a '$' in a data set or estimator name starts no mathtext."""
    return text.replace("$", r"\$")


def _draw(ax, s: Series, baseline_style: object, bands: bool = True) -> None:
    if s.kind == LEVEL or (s.kind == THEORY and not s.x):
        style = THEORY_LINE if s.kind == THEORY else {"linestyle": baseline_style, "lw": 1.2}
        if s.y and s.y[0] is not None:
            ax.axhline(s.y[0], color=s.colour, **style)
        return
    x, y = s.x, _nan(s.y)
    if s.kind == THEORY and (len(x) == 1 or s.points):  # a dash at each point
        ax.plot(x, y, color=s.colour, marker="_", ms=7 if s.points else 14, mew=1.5,
                linestyle="none")  # fmt: skip
        return
    if s.kind == THEORY:
        ax.plot(x, y, color=s.colour, **THEORY_LINE)
        return
    line = "none" if s.points else ("-" if s.kind == MEASURED else baseline_style)
    mark = s.marker if s.kind == MEASURED else ""
    has_err = bands and _has_bounds(s)
    if has_err and (s.points or len(x) < 3):
        ax.errorbar(x, y, yerr=_lengths(y, s), color=s.colour, marker=mark or None, linestyle=line,
                    ms=3.5, capsize=2, lw=1.2)  # fmt: skip
        return
    ax.plot(x, y, color=s.colour, marker=mark or None, linestyle=line, ms=3.5)
    if has_err:
        ax.fill_between(x, _nan(s.lo), _nan(s.hi), color=s.colour, alpha=0.18, linewidth=0)


def _nan(values: list) -> list[float]:
    return [float("nan") if v is None else v for v in values]


def _has_bounds(s: Series) -> bool:
    return s.lo is not None and any(v is not None for v in s.lo)


def _lengths(y: list[float], s: Series) -> list[list[float]]:
    """Error-bar lengths below and above each value (0 where there is no bound or no value)."""
    low = [0.0 if lo is None or v != v else v - lo for v, lo in zip(y, s.lo, strict=True)]
    high = [0.0 if hi is None or v != v else hi - v for v, hi in zip(y, s.hi, strict=True)]
    return [low, high]


def _categories(panel: Panel) -> list[str]:
    return list(dict.fromkeys(v for s in panel.series for v in s.x))


def _draw_categories(ax, panel: Panel, bands: bool) -> None:
    """One row per category (estimator), top to bottom in order: the value with its error bar,
    the closed form as a tick, baselines as vertical lines."""
    rows = {c: -i for i, c in enumerate(_categories(panel))}
    baseline = 0
    for s in panel.series:
        if s.kind in (BASELINE, LEVEL) or not s.x:
            if s.y and s.y[0] is not None:
                style = BASELINE_STYLES[baseline % len(BASELINE_STYLES)]
                ax.axvline(s.y[0], color=s.colour, linestyle=style, lw=1.2)
            baseline += s.kind != THEORY
            continue
        pos, y = [rows[c] for c in s.x], _nan(s.y)
        if s.kind == THEORY:
            ax.plot(y, pos, color=s.colour, marker="|", ms=12, mew=1.5, linestyle="none")
            continue
        err = _lengths(y, s) if bands and _has_bounds(s) else None
        ax.errorbar(y, pos, xerr=err, color=s.colour, marker=s.marker, linestyle="none", ms=4,
                    capsize=2)  # fmt: skip
    ax.set_yticks(list(rows.values()), [_plain_text(c) for c in rows])


def _axes(ax, data: PlotData) -> None:
    if data.y_log:
        (ax.set_xscale if data.categorical else ax.set_yscale)("log")
        if data.y_range:
            (ax.set_xlim if data.categorical else ax.set_ylim)(*data.y_range)
    if data.x_log:
        _plain_log_ticks(ax, data)
    if data.x_ticks:
        ax.set_xticks([v for v, _ in data.x_ticks], [t for _, t in data.x_ticks])
    ax.grid(alpha=0.3)


def _plain_log_ticks(ax, data: PlotData) -> None:
    """A log x axis ticked at the data's own values in plain numbers (m = 16, 32, 64) when they
    are few, else at powers of ten only (minor labels such as 3×10⁰ crowd each other)."""
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    xs = sorted({v for s in data.series for v in s.x if isinstance(v, int | float) and v > 0})
    if 1 < len(xs) <= MAX_DATA_TICKS:
        ax.xaxis.set_major_locator(FixedLocator(xs))
        formatter = ScalarFormatter()
        formatter.set_scientific(False)
        ax.xaxis.set_major_formatter(formatter)


def _legend(fig, data: PlotData) -> None:
    handles = []
    styles = itertools.cycle(BASELINE_STYLES)
    theory = False
    for s in data.legend_entries():
        if s.kind == THEORY:
            theory = True
            continue
        baseline = s.kind in (BASELINE, LEVEL)
        ls = next(styles) if baseline else "none" if s.points else "-"
        mark, label = None if baseline else s.marker, _plain_text(s.label)
        handles.append(Line2D([], [], color=s.colour, marker=mark, linestyle=ls, label=label))
    ticks = any(s.kind == THEORY and s.points for s in data.series)
    if theory and (data.categorical or ticks):
        handles.append(Line2D([], [], color="0.3", marker="|" if data.categorical else "_", ms=8,
                              mew=1.5, linestyle="none", label="closed form"))  # fmt: skip
    elif theory:
        handles.append(theory_handle("closed form"))
    if handles:
        fig.legend(handles=handles, loc="outside right center", fontsize=7,
                   ncol=1 + len(handles) // LEGEND_COLUMN, frameon=False)  # fmt: skip
