"""Neutral plot data: what a chart of a result file shows, for any renderer to draw.

The per-run figure (matplotlib, :mod:`rfbench.present.plots.generic`) and the results site's
interactive chart (Plotly, :mod:`rfbench.present.site.charts`) both draw a :class:`PlotData` made
once from the rows (:func:`rfbench.present.plots.choose.plot_data`), so they show the same lines
with the same words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: How a series is drawn: a measured curve (solid, markers), a closed form (dashed, same colour),
#: a baseline over the x axis (grey, dotted) or a baseline with no x (a horizontal line).
MEASURED, THEORY, BASELINE, LEVEL = "measured", "theory", "baseline", "level"
#: error bands and bars only while a panel has at most this many measured curves (more is a
#: thicket); a chart with more says so rather than promise bands
MAX_BANDS = 8


@dataclass
class Series:
    """One line (or, on a categorical axis, one set of points) of one panel.

    ``lo``/``hi`` bound an error bar or band (absolute values, None where there is none);
    ``points``: markers only, no line (the x values are different inputs, not a grid)."""

    label: str
    x: list
    y: list
    kind: str = MEASURED
    colour: str = "#000000"
    marker: str = "o"
    lo: list | None = None
    hi: list | None = None
    points: bool = False
    legend: bool = True


@dataclass
class Panel:
    """One axes: its title (the settings that set it apart) and its series."""

    title: str
    series: list[Series] = field(default_factory=list)


@dataclass
class PlotData:
    """A whole chart: the title (fixed settings in words), axis labels and scales, the panels.

    ``y_range``: the informative (low, high) of a log axis — round-off zeros fall below it;
    ``notes``: short sentences under the chart (what was aggregated, what was left out);
    ``spread``: draw the error bars or quartile bands of the series; ``x_ticks``: (value, text)
    pairs where the x axis reads better in other words (θ in multiples of π/4);
    ``categorical``: x holds category names (estimators), which renderers may lay out down the
    side."""

    title: str
    x_label: str
    y_label: str
    panels: list[Panel]
    x_log: bool = False
    y_log: bool = False
    categorical: bool = False
    y_range: tuple[float, float] | None = None
    notes: list[str] = field(default_factory=list)
    spread: bool = True
    x_ticks: list[tuple[float, str]] | None = None

    @property
    def series(self) -> list[Series]:
        return [s for p in self.panels for s in p.series]

    def legend_entries(self) -> list[Series]:
        """One entry per distinct (label, kind) that asks for one, in order of appearance."""
        seen: dict[tuple[str, str], Series] = {}
        for s in self.series:
            if s.legend:
                seen.setdefault((s.label, s.kind), s)
        return list(seen.values())
