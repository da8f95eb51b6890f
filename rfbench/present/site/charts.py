"""Interactive charts of result rows (Plotly) from the same neutral plot data as the per-run figure
(:func:`rfbench.present.plots.choose.plot_data`): hover values, click a legend entry to toggle it.
Log axes read as powers of ten (never SI prefixes such as ``10n``) over the informative range."""

from __future__ import annotations

import math

import pandas as pd

from rfbench.present.plots.series import BASELINE, LEVEL, THEORY, PlotData, Series

#: matplotlib marker → Plotly marker symbol
SYMBOLS = {"o": "circle", "s": "square", "^": "triangle-up", "v": "triangle-down",
           "D": "diamond", "d": "diamond-tall", "P": "cross", "X": "x", "*": "star",
           "h": "hexagon", "p": "pentagon", "<": "triangle-left", ">": "triangle-right",
           "8": "octagon", "H": "hexagon2", "+": "cross-thin"}  # fmt: skip
DASH = {THEORY: "dash", BASELINE: "dot", LEVEL: "dot"}
#: numbers on every axis as plain numbers or powers of ten, never SI prefixes
NUMBER_FORMAT = {"exponentformat": "power", "showexponent": "all"}


def _plain(values: list) -> list:
    """JSON-safe values: NaN and ±inf become null (a gap in the line)."""
    finite = lambda v: isinstance(v, int | float) and math.isfinite(v)  # noqa: E731
    return [v if finite(v) or isinstance(v, str) else None for v in values]


def _text(value: str) -> str:
    """Text for Plotly's labels, which read a few HTML tags: '<', '>' and '&' as entities."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def chart_spec(df: pd.DataFrame) -> dict | None:
    """A Plotly figure (as a dict) of the rows' plot data, or None when nothing varies."""
    from rfbench.present.plots.choose import plot_data

    data = plot_data(df)
    return None if data is None else plotly_spec(data)


def plotly_spec(data: PlotData) -> dict:
    """The Plotly figure of neutral plot data: one subplot per panel, one legend entry per
    estimator (toggling it in every panel)."""
    traces: list[dict] = []
    shown: set[tuple[str, str]] = set()
    layout: dict = {}
    n = len(data.panels)
    columns = min(3, n)
    rows = -(-n // columns)
    annotations = []
    for i, panel in enumerate(data.panels, start=1):
        suffix = "" if i == 1 else str(i)
        span = _x_span(panel.series)
        for s in panel.series:
            key = (s.label, s.kind)
            traces.append(_trace(s, data, f"x{suffix}", f"y{suffix}", span, key not in shown))
            shown.add(key)
        bottom, left = i > n - columns, (i - 1) % columns == 0
        if data.categorical:  # estimators down the side, values across (as the PNG)
            layout[f"xaxis{suffix}"] = _axis(data.y_label if bottom else "", data.y_log,
                                             data.y_range, False)  # fmt: skip
            layout[f"yaxis{suffix}"] = {**_axis("", False, None, True), "autorange": "reversed"}
        else:
            layout[f"xaxis{suffix}"] = _axis(data.x_label if bottom else "", data.x_log, None,
                                             False)  # fmt: skip
            layout[f"yaxis{suffix}"] = _axis(data.y_label if left else "", data.y_log,
                                             data.y_range, False)  # fmt: skip
            if data.x_ticks:
                layout[f"xaxis{suffix}"]["tickvals"] = [v for v, _ in data.x_ticks]
                layout[f"xaxis{suffix}"]["ticktext"] = [t for _, t in data.x_ticks]
        if panel.title:
            annotations.append({
                "text": _text(panel.title), "showarrow": False, "xref": f"x{suffix} domain",
                "yref": f"y{suffix} domain", "x": 0.5, "y": 1.0, "yanchor": "bottom",
                "font": {"size": 12},
            })  # fmt: skip
    title = _text(data.title)
    if data.notes:
        title += "<br><sup>" + _text("; ".join(data.notes)) + "</sup>"
    layout.update({
        "title": {"text": title},
        "legend": {"title": {"text": "click to toggle"}},
        "margin": {"l": 70, "r": 20, "t": 80, "b": 60},
        "height": 380 + 260 * (rows - 1),
        "annotations": annotations,
    })  # fmt: skip
    if n > 1:
        layout["grid"] = {"rows": rows, "columns": columns, "pattern": "independent"}
    return {"data": traces, "layout": layout}


def _x_span(series: list[Series]) -> list:
    """The first and last x of a panel: where a level line is drawn."""
    xs = [v for s in series for v in s.x if v is not None]
    if not xs:
        return [0, 1]
    if all(isinstance(v, str) for v in xs):
        return [xs[0], xs[-1]]
    return [min(xs), max(xs)]


def _trace(s: Series, data: PlotData, xaxis: str, yaxis: str, span: list, legend: bool) -> dict:
    name = _text(s.label if s.kind != THEORY else "closed form")
    group = _text(f"{s.kind}:{s.label}")
    x = [_text(v) if isinstance(v, str) else v for v in s.x]
    y = list(s.y)
    if s.kind == LEVEL or (s.kind == THEORY and not s.x):
        x = [_text(v) if isinstance(v, str) else v for v in span]
        y = [s.y[0], s.y[0]] if s.y else []
    lines = s.kind != THEORY or len(x) > 1
    mode = "markers" if (s.points or data.categorical) and s.kind != LEVEL else "lines"
    if s.kind not in (THEORY, BASELINE, LEVEL) and mode == "lines":
        mode = "lines+markers"
    trace = {
        "type": "scatter", "mode": mode, "name": name, "legendgroup": group,
        "showlegend": legend and (s.legend or s.kind == THEORY),
        "x": _plain(x), "y": _plain(y), "xaxis": xaxis, "yaxis": yaxis,
        "line": {"color": s.colour, "dash": DASH.get(s.kind, "solid")},
        "marker": {"color": s.colour, "symbol": SYMBOLS.get(s.marker, "circle")},
        "hovertemplate": f"{name}<br>{_text(data.x_label)}=%{{x}}<br>"
                         f"{_text(data.y_label)}=%{{y:.5g}}<extra></extra>",
    }  # fmt: skip
    if s.kind == THEORY and (not lines or s.points or data.categorical):
        trace["marker"]["symbol"] = "line-ew-open"
        trace["marker"]["size"] = 14
    if data.spread and s.lo is not None and any(v is not None for v in s.lo):
        up = [None if v is None or b is None else b - v for v, b in zip(s.y, s.hi, strict=True)]
        down = [None if v is None or b is None else v - b for v, b in zip(s.y, s.lo, strict=True)]
        trace["error_y"] = {"type": "data", "array": _plain(up), "arrayminus": _plain(down),
                            "visible": True}  # fmt: skip
    if data.categorical:
        return _across(trace, data)
    return trace


def _across(trace: dict, data: PlotData) -> dict:
    """A categorical trace laid out across: values on x, categories down y."""
    trace["x"], trace["y"] = trace["y"], trace["x"]
    if "error_y" in trace:
        trace["error_x"] = trace.pop("error_y")
    if trace["marker"]["symbol"] == "line-ew-open":
        trace["marker"]["symbol"] = "line-ns-open"
    name = trace["name"]
    trace["hovertemplate"] = f"{name}<br>{_text(data.y_label)}=%{{x:.5g}}<extra></extra>"
    return trace


def _axis(title: str, log: bool, bounds: tuple[float, float] | None, categorical: bool) -> dict:
    kind = "category" if categorical else "log" if log else "linear"
    axis: dict = {"title": {"text": _text(title)}, **NUMBER_FORMAT, "type": kind}
    if kind == "log" and bounds:
        axis["range"] = [math.log10(bounds[0]), math.log10(bounds[1])]
    return axis


def chart_html(spec: dict, div_id: str) -> str:
    """A div and the script that draws ``spec`` into it (plotly.min.js loaded by the page)."""
    from rfbench.present.site.html import esc, script_json

    return (
        f'<div id="{esc(div_id)}" class="card"></div>'
        f"<script>(function(){{var s = {script_json(spec)};"
        f" Plotly.newPlot({script_json(div_id)}, s.data, s.layout,"
        f" {{responsive: true, displaylogo: false}});}})();</script>"
    )
