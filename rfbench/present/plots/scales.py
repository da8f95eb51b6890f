"""Scales of a chart's plot data: when an axis is logarithmic, where it starts, how θ is ticked."""

from __future__ import annotations

import math

import pandas as pd

from rfbench.present.plots.series import LEVEL, PlotData

#: on a log axis, positive values below this fraction of the median are round-off of an exact
#: point (an estimator exact at θ = 0, say): the axis stops above them and a note says so
ROUND_OFF_FRACTION = 1e-9
#: a log y axis when the positive values span more than this factor; a log x axis likewise
LOG_SPAN = 100.0
X_LOG_SPAN = 20.0

ANGLE_TICKS = ("0", "π/4", "π/2", "3π/4", "π")


def angle_ticks(theta: pd.Series) -> list[tuple[float, str]] | None:
    """θ ∈ [0, π] at multiples of π/4, when the angles span at least π/2."""
    values = theta.dropna().astype(float)
    if values.empty or values.max() - values.min() < math.pi / 2:
        return None
    return [(k * math.pi / 4, text) for k, text in enumerate(ANGLE_TICKS)]


def drop_empty_panels(data: PlotData) -> None:
    """On a log axis, a panel whose curves are all 0 (float64 adds no error to itself; window
    and top-k are exact at F >= T) is a note, not an empty box: its baseline levels alone would
    leave an axis with no data (and a log x axis with no range). When every panel is empty,
    ``data.panels`` is left empty: the chart has nothing to draw."""
    kept = []
    for panel in data.panels:
        curves = [s for s in panel.series if s.kind != LEVEL] or panel.series
        if any(v is not None and v > 0 for s in curves for v in s.y):
            kept.append(panel)
        else:
            data.notes.append(f"{panel.title}: all values 0 (not drawn on the log axis)")
    data.panels = kept


def spans(column: pd.Series, factor: float) -> bool:
    """Whether a column's values are all positive and span at least ``factor``."""
    values = column.dropna().astype(float)
    return bool(len(values) > 1 and (values > 0).all() and values.max() / values.min() >= factor)


def set_y_scale(data: PlotData, always: bool = False) -> None:
    """A log y axis when the positive values span more than :data:`LOG_SPAN` (or ``always``),
    starting above the round-off of exact points, which are left off and counted in a note."""
    ys = [v for s in data.series for v in s.y if v is not None]
    positive = sorted(v for v in ys if v > 0)
    if not positive or min(ys) < 0:
        return
    median = positive[len(positive) // 2]
    informative = [v for v in positive if v >= ROUND_OFF_FRACTION * median]
    if informative[-1] / informative[0] < LOG_SPAN and not always:
        return
    data.y_log = True
    data.y_range = (informative[0] / 2, _top(data, informative))
    floor = informative[0]
    tiny = 0
    for s in data.series:
        below = [v is not None and v < floor for v in s.y]
        tiny += sum(below)
        s.y = [None if b else v for v, b in zip(s.y, below, strict=True)]
        if s.lo is not None:
            s.lo = [
                None if b or lo is None else max(lo, floor / 2)
                for lo, b in zip(s.lo, below, strict=True)
            ]
            s.hi = [None if b else hi for hi, b in zip(s.hi, below, strict=True)]
    if tiny:
        data.notes.append(
            f"{tiny} value(s) of 0 or at round-off (exact there) left off the log axis"
        )


#: on a log axis, values above this factor times the upper quartile are outliers (trig's
#: attention errors of ~10² beside errors below 1): the axis stops above the quartile and a note
#: names them, so they do not compress the rest
OUTLIER_FACTOR = 30.0


def _top(data: PlotData, values: list[float]) -> float:
    """The top of a log axis: twice the largest value, or, past an outlier, a few times the upper
    quartile (a note names the curves above it)."""
    upper = values[(3 * (len(values) - 1)) // 4]
    if values[-1] <= OUTLIER_FACTOR * upper:
        return values[-1] * 2
    top = 5 * upper
    names = [s.label for s in data.series if any(v is not None and v > top for v in s.y)]
    names = list(dict.fromkeys(names))
    data.notes.append(
        f"{', '.join(names)}: values up to {values[-1]:.3g} above the axis (cut at {top:.3g} so "
        "the other curves can be read)"
    )
    return top
