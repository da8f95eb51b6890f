"""Interactive charts of result rows (Plotly): hover values, click a legend entry to toggle it.

A result file is tidy (one row per point and metric), so one generic chart serves every
experiment: the headline metric against the parameter that varies most along a curve, one trace
per estimator and per other varying setting. Figures keep their paper layout in the PNG; the
chart is for reading exact values and comparing a chosen few estimators.
"""

from __future__ import annotations

import math

import pandas as pd

#: Metrics shown first when present (the quantity each paper figure plots).
HEADLINE = (
    "rel_rmse", "accuracy", "log_rel_var", "rel_frob", "mse", "theory_rel_rmse", "rel_mae",
    "frob_sq", "nonfinite_fraction", "time_s",
)  # fmt: skip
#: Candidate x axes, in order of preference.
X_AXES = ("theta", "sigma", "m_per_d", "r", "m", "n", "d", "L")
#: Columns that never split traces.
NOT_SETTINGS = {"experiment", "figure", "metric", "value", "stderr", "n_trials", "resolved"}
MAX_TRACES = 60


def _plain(col: pd.Series) -> list:
    """JSON-safe values: NaN and ±inf become null (a gap in the line)."""
    out = []
    for v in col.tolist():
        finite = isinstance(v, int | float) and math.isfinite(v)
        out.append(v if finite or isinstance(v, str) else None)
    return out


def _text(value: str) -> str:
    """Text for Plotly's labels, which read a few HTML tags: '<', '>' and '&' as entities."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _varying(df: pd.DataFrame, col: str) -> bool:
    return col in df.columns and df[col].nunique(dropna=True) > 1


def chart_spec(df: pd.DataFrame) -> dict | None:
    """A Plotly figure (as a dict) of the headline metric, or None when nothing varies."""
    metric = next((m for m in HEADLINE if m in set(df["metric"])), None)
    if metric is None:
        return None
    rows = df[df["metric"] == metric]
    x = next((c for c in X_AXES if _varying(rows, c)), None)
    if x is None:
        return None
    split = [
        c for c in rows.columns
        if c not in NOT_SETTINGS and c != x and _varying(rows, c)
    ]  # fmt: skip
    traces = []
    keys = split or ["estimator"]
    for key, part in rows.groupby(keys, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        name = _text(", ".join(
            f"{v}" if c == "estimator" else f"{c}={v}" for c, v in zip(keys, key, strict=True)
        ))  # fmt: skip
        part = part.sort_values(x)
        trace = {
            "type": "scatter", "mode": "lines+markers", "name": name,
            "x": _plain(part[x]), "y": _plain(part["value"]),
            "hovertemplate": f"{name}<br>{x}=%{{x}}<br>{metric}=%{{y:.5g}}<extra></extra>",
        }  # fmt: skip
        se = part["stderr"]
        if "resolved" in part:  # no error bar where the sample cannot resolve the statistic
            se = se.where(~part["resolved"].eq(False).fillna(False).astype(bool))
        if se.notna().any():
            trace["error_y"] = {"type": "data", "array": _plain(se.fillna(0)), "visible": True}
        traces.append(trace)
        if len(traces) >= MAX_TRACES:
            break
    positive = (rows["value"] > 0).all()
    spread = rows["value"].max() / rows["value"].min() if positive else 0
    layout = {
        "title": {"text": f"{metric} vs {x}"},
        "xaxis": {"title": {"text": x}},
        "yaxis": {"title": {"text": metric}, "type": "log" if spread > 100 else "linear"},
        "legend": {"title": {"text": "click to toggle"}},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "height": 480,
    }
    return {"data": traces, "layout": layout}


def chart_html(spec: dict, div_id: str) -> str:
    """A div and the script that draws ``spec`` into it (plotly.min.js loaded by the page)."""
    from rfbench.site.html import esc, script_json

    return (
        f'<div id="{esc(div_id)}" class="card"></div>'
        f"<script>(function(){{var s = {script_json(spec)};"
        f" Plotly.newPlot({script_json(div_id)}, s.data, s.layout,"
        f" {{responsive: true, displaylogo: false}});}})();</script>"
    )
