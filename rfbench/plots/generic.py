"""A figure for any result file, so every run ends in a picture.

What it shows is chosen from what varies in the rows (:func:`rfbench.plots.choose.plot_data`):
lines over the varying parameter, one colour per estimator, closed forms dashed, baselines as
grey reference lines, the fixed settings in the title in words. The results site's interactive
chart draws the same :class:`~rfbench.plots.series.PlotData` (:mod:`rfbench.site.charts`).
Paper figures keep their own layouts (``rfbench figures``); this one serves any run, including a
user's own data and parameters. It is written beside the result file as ``<name>.png`` and
replaces only a PNG that rfbench drew.
"""

from __future__ import annotations

from pathlib import Path

from rfbench.plots.series import BASELINE, LEVEL, MEASURED, THEORY, PlotData, Series
from rfbench.plots.style import apply

SOFTWARE = "rfbench"


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
    import matplotlib.pyplot as plt

    from rfbench.plots.choose import plot_data
    from rfbench.results import atomic_write, load_results

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
THEORY_STYLE = {"linestyle": (0, (4, 2)), "linewidth": 1.0}
#: error bands and bars only while a panel has at most this many curves (more is a thicket)
MAX_BANDS = 8
#: inches of figure height per legend entry (the legend must not be cut off)
LEGEND_ROW = 0.17


def render(data: PlotData):
    """A matplotlib Figure of ``data``: a grid of panels sharing one legend outside the axes."""
    import matplotlib.pyplot as plt

    apply()
    n = len(data.panels)
    ncols = min(COLUMNS, n)
    nrows = -(-n // ncols)
    categorical = data.categorical
    width = PANEL_WIDTH * ncols * (1.3 if categorical else 1.0) * (1.4 if n == 1 else 1.0)
    height = max(PANEL_HEIGHT * nrows, LEGEND_ROW * (len(data.legend_entries()) + 3))
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(width, height), squeeze=False, layout="constrained",
        sharey=not categorical and nrows * ncols > 1,
    )  # fmt: skip
    for ax, panel in zip(axes.flat, data.panels, strict=False):
        baseline = 0
        bands = data.spread and sum(s.kind == MEASURED for s in panel.series) <= MAX_BANDS
        for s in panel.series:
            if s.kind in (BASELINE, LEVEL):
                _draw(ax, s, BASELINE_STYLES[baseline % len(BASELINE_STYLES)], bands)
                baseline += 1
            else:
                _draw(ax, s, "-", bands)
        ax.set_title(panel.title, fontsize=8)
        _axes(ax, data)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[-1, :]:
        ax.set_xlabel(data.x_label)
    for ax in axes[:, 0]:
        ax.set_ylabel(data.y_label)
    fig.suptitle(data.title, fontsize=9)
    _legend(fig, data)
    if data.notes:
        fig.text(0.0, 0.0, "\n".join(data.notes), fontsize=6, color="0.35", ha="left", va="top",
                 transform=fig.transFigure)  # fmt: skip
    return fig


def _draw(ax, s: Series, baseline_style: object, bands: bool = True) -> None:
    if s.kind == LEVEL or (s.kind == THEORY and not s.x):
        style = THEORY_STYLE if s.kind == THEORY else {"linestyle": baseline_style, "lw": 1.2}
        if s.y and s.y[0] is not None:
            ax.axhline(s.y[0], color=s.colour, **style)
        return
    x = s.x
    y = [float("nan") if v is None else v for v in s.y]
    if s.kind == THEORY and (len(x) == 1 or s.points):  # a dash at each point
        ax.plot(x, y, color=s.colour, marker="_", ms=7 if s.points else 14, mew=1.5,
                linestyle="none")  # fmt: skip
        return
    if s.kind == THEORY:
        ax.plot(x, y, color=s.colour, **THEORY_STYLE)
        return
    line = "none" if s.points else ("-" if s.kind == MEASURED else baseline_style)
    mark = s.marker if s.kind == MEASURED else ""
    has_err = bands and s.lo is not None and any(v is not None for v in s.lo)
    if has_err and (s.points or len(x) < 3):
        low = [0.0 if lo is None or v != v else v - lo for v, lo in zip(y, s.lo, strict=True)]
        high = [0.0 if hi is None or v != v else hi - v for v, hi in zip(y, s.hi, strict=True)]
        ax.errorbar(x, y, yerr=[low, high], color=s.colour, marker=mark or None, linestyle=line,
                    ms=3.5, capsize=2, lw=1.2)  # fmt: skip
        return
    ax.plot(x, y, color=s.colour, marker=mark or None, linestyle=line, ms=3.5)
    if has_err:
        lo = [float("nan") if v is None else v for v in s.lo]
        hi = [float("nan") if v is None else v for v in s.hi]
        ax.fill_between(x, lo, hi, color=s.colour, alpha=0.18, linewidth=0)


def _axes(ax, data: PlotData) -> None:
    if data.y_log:
        ax.set_yscale("log")
        if data.y_range:
            ax.set_ylim(*data.y_range)
    if data.x_log:
        ax.set_xscale("log")
    if data.categorical:
        ax.tick_params(axis="x", labelrotation=35)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
    ax.grid(alpha=0.3)


def _legend(fig, data: PlotData) -> None:
    from matplotlib.lines import Line2D

    handles = []
    baseline = 0
    theory = False
    for s in data.legend_entries():
        if s.kind == THEORY:
            theory = True
            continue
        if s.kind in (BASELINE, LEVEL):
            ls = BASELINE_STYLES[baseline % len(BASELINE_STYLES)]
            baseline += 1
            handles.append(Line2D([], [], color=s.colour, linestyle=ls, label=s.label))
        else:
            ls = "none" if s.points else "-"
            handles.append(Line2D([], [], color=s.colour, marker=s.marker, linestyle=ls,
                                  label=s.label))  # fmt: skip
    if theory:
        handles.append(Line2D([], [], color="0.3", label="closed form", **THEORY_STYLE))
    if handles:
        fig.legend(handles=handles, loc="outside right center", fontsize=7,
                   ncol=1 + len(handles) // 20, frameon=False)  # fmt: skip
