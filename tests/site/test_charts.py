"""The site's interactive chart: the per-run figure's plot data, log axes in powers of ten (no SI
prefixes such as ``10n``, ``1p``) that start at the data's informative range, not at round-off."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rfbench.present.site.charts import chart_spec


def _rows() -> pd.DataFrame:
    """Relative errors over θ spanning decades, exact (1e-16) at θ = 0 for one estimator."""
    records = []
    for i, est in enumerate(("trig@iid", "hyperbolic@iid")):
        for theta in np.linspace(0, np.pi, 5):
            value = 2e-16 if (i == 0 and theta == 0) else 1e-3 * (i + 1) * 10**theta
            records.append({"experiment": "pointwise", "figure": "", "estimator": est,
                            "kernel": "softmax", "metric": "rel_rmse", "value": value,
                            "stderr": value / 20, "n_trials": 100, "r": 1.5, "d": 64,
                            "theta": theta})  # fmt: skip
    return pd.DataFrame(records)


def test_log_axes_read_as_powers_of_ten_over_the_informative_range() -> None:
    spec = chart_spec(_rows())
    y = spec["layout"]["yaxis"]
    assert y["type"] == "log" and y["exponentformat"] == "power"
    low, high = y["range"]  # log10 units
    assert -4 < low < math.log10(2e-3) and high > math.log10(2e-3 * 10**math.pi)
    assert spec["layout"]["xaxis"]["exponentformat"] == "power"


def test_the_chart_has_the_figures_title_and_one_entry_per_estimator() -> None:
    spec = chart_spec(_rows())
    assert spec["layout"]["title"]["text"].startswith(
        "Softmax kernel, r = 1.5, d = 64: relative RMSE vs angle θ"
    )
    named = [t["name"] for t in spec["data"] if t["showlegend"]]
    assert named == ["trig@iid", "hyperbolic@iid"]


def _per_estimator_rows() -> pd.DataFrame:
    """One value per estimator and data set (qmc-like: nothing varies along a curve), with a
    closed form for one estimator and an exact baseline."""
    records = []
    for dataset in ("wine", "boston"):
        for i, est in enumerate(("trig@orf", "hyperbolic@orf", "angular-hybrid@orf")):
            base = {"experiment": "qmc", "figure": "", "estimator": est, "kernel": "softmax",
                    "dataset": dataset, "n_trials": 20, "m": 64}  # fmt: skip
            records.append({**base, "metric": "mse", "value": 0.01 * (i + 1), "stderr": 0.001})
            if i == 0:
                records.append({**base, "metric": "theory_mse", "value": 0.012, "stderr": None})
    return pd.DataFrame(records)


def test_every_spec_is_a_valid_plotly_figure() -> None:
    """Plotly's own validator accepts the spec (subplots, categories across, closed forms)."""
    import plotly.graph_objects as go

    for rows in (_rows(), _per_estimator_rows()):
        spec = chart_spec(rows)
        go.Figure(data=spec["data"], layout=spec["layout"])  # raises on an unknown property
    spec = chart_spec(_per_estimator_rows())
    assert spec["layout"]["grid"] == {"rows": 1, "columns": 2, "pattern": "independent"}
    assert spec["layout"]["yaxis"]["type"] == "category"  # estimators down the side
    assert {a["text"] for a in spec["layout"]["annotations"]} == {"wine", "boston"}
