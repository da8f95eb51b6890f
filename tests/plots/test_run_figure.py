"""The figure drawn after every run is readable: lines over the varying parameter, one colour
per estimator, the fixed settings in the title in words, closed forms dashed, baselines as
reference lines, the legend inside the saved picture and no warning on the terminal."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rfbench.present.plots import words
from rfbench.present.plots.choose import plot_data
from rfbench.present.plots.generic import draw_result, render
from rfbench.present.plots.series import LEVEL, MEASURED, THEORY
from rfbench.present.plots.style import assign

THETAS = np.linspace(0, np.pi, 5)


def _rows(records: list[dict], experiment: str) -> pd.DataFrame:
    df = pd.DataFrame(records)
    df["experiment"] = experiment
    df["figure"] = ""
    if "stderr" not in df:
        df["stderr"] = np.nan
    df["n_trials"] = 100
    return df


def pointwise_rows(estimators=("trig@iid", "hyperbolic@iid"), round_off: bool = False):
    records = []
    for i, est in enumerate(estimators):
        for theta in THETAS:
            value = 0.01 * (i + 1) * 10**theta
            if round_off and theta == 0:
                value = 2e-16  # exact at θ = 0
            base = {"estimator": est, "kernel": "softmax", "r": 1.5, "d": 64, "m": 128,
                    "theta": theta}  # fmt: skip
            records.append({**base, "metric": "rel_rmse", "value": value, "stderr": 0.01})
            records.append({**base, "metric": "theory_rel_rmse", "value": value * 1.05})
    return _rows(records, "pointwise")


def test_title_names_the_fixed_settings_in_words() -> None:
    data = plot_data(pointwise_rows())
    assert data.title == "Softmax kernel, r = 1.5, d = 64, m = 128: relative RMSE vs angle θ"
    assert data.x_label == "angle θ (rad)" and not data.categorical


def test_title_names_a_fixed_feature_budget() -> None:
    """A run sized by a feature budget (classify --budget, attention) says F in its title: the
    maps' projections differ (a [sin, cos] map has F/2), so m alone would not say it."""
    rows = pointwise_rows().assign(budget=16)
    assert plot_data(rows).title.startswith("Softmax kernel, r = 1.5, d = 64, F = 16, m = 128")


def test_closed_forms_are_dashed_curves_of_the_estimators_colour() -> None:
    data = plot_data(pointwise_rows())
    (panel,) = data.panels
    measured = [s for s in panel.series if s.kind == MEASURED]
    theory = [s for s in panel.series if s.kind == THEORY]
    assert [s.label for s in measured] == ["trig@iid", "hyperbolic@iid"]
    assert [s.colour for s in theory] == [s.colour for s in measured]
    assert len(theory[0].x) == len(THETAS)
    fig = render(data)
    dashed = [ln for ln in fig.axes[0].lines if ln.get_linestyle() == "--"]
    assert len(dashed) == 2
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_round_off_zeros_do_not_set_the_log_axis() -> None:
    """An estimator exact at θ = 0 gives 1e-16 there; the axis shows the informative range."""
    data = plot_data(pointwise_rows(round_off=True))
    assert data.y_log and data.y_range[0] > 1e-3
    assert any("round-off" in note for note in data.notes)


def classify_rows() -> pd.DataFrame:
    records = []
    for dataset, d, sigma in (("wine", 13, 0.35), ("banknote", 4, 1.06)):
        base = {"kernel": "gaussian", "dataset": dataset, "d": d, "sigma": sigma,
                "metric": "accuracy"}  # fmt: skip
        records.append({**base, "estimator": "exact", "m": pd.NA, "m_per_d": np.nan,
                        "value": 0.95})  # fmt: skip
        for est in ("positive@iid", "positive@orf", "positive@simrf"):
            for k in (1, 2):
                records.append({**base, "estimator": est, "m": k * d, "m_per_d": float(k),
                                "value": 0.6 + 0.1 * k, "stderr": 0.02})  # fmt: skip
    df = _rows(records, "classify")
    df["m"] = df["m"].astype("Int64")
    return df


def test_exact_is_a_reference_line_and_each_estimator_one_legend_entry() -> None:
    """Today: one dot per (estimator, m) with 14 legend entries, ``exact, m=<NA>`` off the axis."""
    data = plot_data(classify_rows())
    entries = data.legend_entries()
    assert [s.label for s in entries] == ["positive@iid", "positive@orf", "positive@simrf", "exact"]
    assert entries[-1].kind == LEVEL and not any("<NA>" in s.label for s in data.series)
    assert data.x_label == "m / d"
    assert sorted(p.title for p in data.panels) == [
        "banknote, d = 4, σ = 1.06",
        "wine, d = 13, σ = 0.35",
    ]
    assert all(len(s.x) == 2 for s in data.series if s.kind == MEASURED)  # lines, not dots


def test_a_stopping_reason_splits_no_chart() -> None:
    """A sequentially drawn run (stop = resolved) has cells that stopped early beside cells at the
    cap, each with its own anytime interval: what a row measured, not what it is, so every data
    set and every m is drawn (they once showed only the cap's cells and named 'stop' a setting)."""
    rows = classify_rows()
    measured = rows["estimator"] != "exact"
    rows["stop"] = np.where(measured, np.where(rows["dataset"] == "wine", "resolved", "cap"), None)
    rows["cs_low"] = np.where(measured, rows["value"] - 0.05 * rows["m"], np.nan)
    rows["sigma_published"] = np.where(rows["dataset"] == "wine", 0.35, 1.06)
    data = plot_data(rows)
    assert len(data.panels) == 2 and not data.notes
    assert all(len(s.x) == 2 for s in data.series if s.kind == MEASURED)
    assert not any("stop" in p.title or "sigma_published" in p.title for p in data.panels)


@pytest.mark.parametrize("apart", [False, True])
def test_panels_on_scales_far_apart_get_their_own_value_axis(apart: bool) -> None:
    """Accuracies near 0.7 on one data set and 0.9 on another: one shared axis would flatten both
    panels' curves to a sliver, so each gets its own; panels on one scale still share theirs."""
    import matplotlib.pyplot as plt

    rows = classify_rows()
    if apart:  # wine's curves and exact kernel within 0.69-0.73, banknote's 0.9-1.15
        wine = rows["dataset"] == "wine"
        rows.loc[wine, "value"] = rows.loc[wine, "value"] / 10 + 0.63
        rows.loc[~wine, "value"] += 0.2
    rows["stderr"] = 0.002
    fig = render(plot_data(rows))
    first, second = fig.axes[:2]
    assert first.get_shared_y_axes().joined(first, second) is not apart
    plt.close(fig)


def test_twelve_estimators_get_twelve_colours() -> None:
    names = [f"plugin{i}@iid" for i in range(12)]
    colours = {colour for colour, _ in assign(names).values()}
    assert len(colours) == 12
    more = assign([f"plugin{i}@iid" for i in range(14)])
    assert len(set(more.values())) == 14  # beyond twelve the marker changes


def attention_rows() -> pd.DataFrame:
    records = []
    rng = np.random.default_rng(0)
    for layer in range(3):
        for head in range(6):
            base = {"kernel": "softmax", "d": 32, "layer": layer, "head": head,
                    "metric": "out_rel_frob"}  # fmt: skip
            records.append({**base, "estimator": "uniform", "kind": "baselines", "value": 0.9})
            records.append({**base, "estimator": "zero", "kind": "baselines", "value": 1.0})
            for est in ("positive@iid", "trig@iid"):
                for f in (16, 64):
                    value = (0.5 if est == "positive@iid" else 30.0) * rng.uniform(0.5, 2) / f**0.5
                    m = f if est == "positive@iid" else f // 2  # trig: 2 features a projection
                    records.append({**base, "estimator": est, "kind": "heads", "m": m,
                                    "budget": f, "features": f, "value": value,
                                    "stderr": 0.01})  # fmt: skip
            for f in (16, 64):  # a local method: no projections, a budget all the same
                records.append({**base, "estimator": "window", "kind": "heads", "budget": f,
                                "features": f, "window": f, "value": 0.3})  # fmt: skip
    records.append({"estimator": "positive@iid", "kind": "swap", "metric": "swap_cosine",
                    "value": 0.6, "m": 64})  # fmt: skip
    df = _rows(records, "attention")
    df["m"] = df["m"].astype("Int64")
    return df


def test_attention_draws_output_error_against_features_per_layer_with_baselines() -> None:
    """Every method against the feature budget (local ones too: they have no m), one panel per
    layer; uniform and zero attention as baselines."""
    data = plot_data(attention_rows())
    assert data is not None and data.x_label == words.parameter_words("budget")
    assert len(data.panels) == 3 and all("layer" in p.title for p in data.panels)
    kinds = {s.label: s.kind for s in data.legend_entries()}
    assert kinds == {"positive@iid": MEASURED, "trig@iid": MEASURED, "window": MEASURED,
                     "uniform": LEVEL, "zero": LEVEL}  # fmt: skip
    assert any("median over 6 heads" in note for note in data.notes)


def _attention_exact_at_t(local_value: float = 0.0) -> pd.DataFrame:
    """Budgets 16, 256 at T = 128 and 512: window and top-k keep min(F, T) features (exact, error
    0 at F = 256 >= T = 128), so ``features`` follows from budget and tokens."""
    records = []
    for layer in range(6):
        for tokens in (128, 512):
            for head in range(4):
                base = {"kernel": "softmax", "d": 32, "layer": layer, "head": head,
                        "tokens": tokens, "metric": "out_rel_frob"}  # fmt: skip
                records.append({**base, "estimator": "uniform", "kind": "baselines",
                                "value": 0.85})  # fmt: skip
                records.append({**base, "estimator": "zero", "kind": "baselines", "value": 1.0})
                for f in (16, 256):
                    records.append({**base, "estimator": "positive@iid", "kind": "heads",
                                    "budget": f, "features": f, "value": 0.9})  # fmt: skip
                    for est in ("window", "top-k"):
                        exact = f >= tokens
                        records.append({**base, "estimator": est, "kind": "heads", "budget": f,
                                        "features": min(f, tokens),
                                        "value": local_value if exact else 0.5})  # fmt: skip
    return _rows(records, "attention")


def test_a_setting_that_follows_from_the_others_slices_no_curve_away(tmp_path: Path) -> None:
    """Issue 39: fixing ``features`` (min(F, T)) at its middle value left only window and top-k
    at F = 256 >= T = 128, all 0: an empty log axis that failed the run after its work."""
    data = plot_data(_attention_exact_at_t())
    assert data is not None
    assert not any(note.startswith("features") for note in data.notes)
    drawn = {s.label for p in data.panels for s in p.series if s.kind == MEASURED}
    assert drawn == {"positive@iid", "window", "top-k"}
    path = tmp_path / "attention.parquet"
    _attention_exact_at_t().to_parquet(path)
    assert draw_result(path).stat().st_size > 1000


def test_curves_all_zero_never_leave_an_empty_log_axis(tmp_path: Path) -> None:
    """Only exact methods (error 0 everywhere): a linear axis where they are seen at 0, not a log
    axis with nothing on it."""
    rows = _attention_exact_at_t()
    rows = rows[(rows["estimator"] != "positive@iid") & (rows["tokens"] == 128)]
    rows = rows[rows["budget"].isna() | (rows["budget"] == 256)]
    data = plot_data(rows)
    assert data is not None and not data.y_log
    assert all(v == 0 for s in data.series if s.kind == MEASURED for v in s.y)
    path = tmp_path / "attention.parquet"
    rows.to_parquet(path)
    assert draw_result(path).stat().st_size > 1000


def test_user_pairs_are_points_with_no_warning_and_the_legend_inside(tmp_path: Path) -> None:
    """A --data run: x values are different pairs (their own norms), many of them; today 40
    series, a cut-off legend and ``UserWarning: Tight layout not applied``."""
    from rfbench.compute.results import make_provenance, write_results

    rng = np.random.default_rng(1)
    records = []
    for pair in range(25):
        theta, nq = rng.uniform(1, 2), rng.uniform(0.5, 1.5)
        for est in ("trig@iid", "hyperbolic@iid", "angular-hybrid@iid", "gaussian-hybrid@iid"):
            base = {"estimator": est, "kernel": "softmax", "d": 16, "theta": theta,
                    "norm_q": nq, "pair_index": pair, "m": 128 if "@" in est else 16}  # fmt: skip
            records.append({**base, "metric": "rel_rmse", "value": rng.uniform(0.1, 1)})
            records.append({**base, "metric": "theory_rel_rmse", "value": rng.uniform(0.1, 1)})
    rows = _rows(records, "pointwise")
    data = plot_data(rows)
    assert len(data.legend_entries()) == 5  # four estimators and the closed form
    assert all(s.points for s in data.series)
    path = tmp_path / "pw.parquet"
    write_results(
        rows, path, make_provenance(config={"name": "pw"}, seed=0, experiment="pointwise")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png = draw_result(path)
    assert png is not None and png.is_file()
    fig = render(data)
    fig.canvas.draw()
    (legend,) = fig.legends
    box, frame = legend.get_window_extent(), fig.bbox
    import matplotlib.pyplot as plt

    plt.close(fig)
    assert box.x1 <= frame.x1 + 1 and box.y0 >= frame.y0 - 1  # not cut off


@pytest.mark.parametrize("x", [0.5, 2.0, 64])
def test_numbers_in_titles(x: float) -> None:
    from rfbench.present.plots.words import setting

    assert setting("r", x) == f"r = {x:g}"
    assert setting("theta", math.pi / 4) == "θ = 0.25π"


def test_angles_read_in_multiples_of_pi() -> None:
    data = plot_data(pointwise_rows())
    assert [text for _, text in data.x_ticks] == ["0", "π/4", "π/2", "3π/4", "π"]


def test_one_value_per_estimator_is_a_dot_plot_with_names_down_the_side() -> None:
    """qmc: nothing varies along a curve; the estimators' names read horizontally, the closed
    form a tick on the estimator's row."""
    import matplotlib.pyplot as plt

    records = []
    for i, est in enumerate(("trig@orf", "hyperbolic@orf", "trig@halton")):
        base = {"estimator": est, "kernel": "softmax", "dataset": "wine", "m": 512}
        records.append({**base, "metric": "mse", "value": 0.01 * (i + 1), "stderr": 0.001})
        records.append({**base, "metric": "theory_mse", "value": 0.011 * (i + 1)})
    data = plot_data(_rows(records, "qmc"))
    assert data.categorical and data.title == "Softmax kernel, wine, m = 512: MSE per estimator"
    fig = render(data)
    names = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert names == ["trig@orf", "hyperbolic@orf", "trig@halton"]
    assert fig.axes[0].get_xlabel() == "MSE"
    plt.close(fig)


def test_x_is_the_shared_grid_not_a_setting_tuned_per_estimator() -> None:
    """DERF Fig. 3: accuracy vs m with σ tuned per (estimator, m); σ is no x axis."""
    records = []
    for i, est in enumerate(("trig@orf", "positive@orf")):
        for m in (8, 16, 32, 64):
            records.append({"estimator": est, "kernel": "gaussian", "dataset": "wine", "d": 13,
                            "m": m, "sigma": 0.3 + 0.01 * m + 0.1 * i, "metric": "accuracy",
                            "value": 0.5 + m / 200})  # fmt: skip
    data = plot_data(_rows(records, "classify"))
    assert data.x_label == "projections m" and not any(s.points for s in data.series)


def test_a_grid_of_many_estimators_shows_the_twelve_best_and_says_so() -> None:
    records = []
    for i in range(30):
        for r in (0.5, 1.0):
            records.append({"estimator": f"c{i}@iid", "kernel": "softmax", "r": r,
                            "metric": "rel_frob", "value": (i + 1) * r})  # fmt: skip
    data = plot_data(_rows(records, "gram"))
    labels = [s.label for s in data.legend_entries()]
    assert labels == [f"c{i}@iid" for i in range(12)]  # the lowest errors
    assert any("12 of 30 estimators" in note for note in data.notes)


def test_names_with_dollars_are_drawn_as_written(tmp_path: Path) -> None:
    """A data file or plugin estimator named with '$' signs starts no mathtext (which would fail
    to parse or change the name)."""
    import matplotlib.pyplot as plt

    rows = pointwise_rows(estimators=("trig@iid", "my$_$est@iid"))
    rows["dataset"] = "q$^$k.npz@abc"
    fig = render(plot_data(rows))
    fig.canvas.draw()  # parses every text
    (legend,) = fig.legends
    assert "my$_$est@iid" in [t.get_text().replace("\\$", "$") for t in legend.get_texts()]
    plt.close(fig)


def test_fifteen_methods_get_fifteen_colours_and_the_note_promises_no_undrawn_band() -> None:
    """Issue 39: 15 attention methods drew on 12 recycled colours (positive@iid and
    window+positive@iid the same blue) under a note promising quartile bands it did not draw."""
    names = ["positive@iid", *(f"m{i}@iid" for i in range(13)), "window+positive@iid"]
    pairs = assign(names)
    assert len({colour for colour, _ in pairs.values()}) == 15
    rows = attention_rows()
    extra = rows[rows["estimator"] == "positive@iid"]
    rows = pd.concat([rows, *(extra.assign(estimator=f"m{i}@iid") for i in range(8))])
    data = plot_data(rows)
    assert not data.spread and not any("band" in note for note in data.notes)
    assert any("quartiles not drawn" in note for note in data.notes)
    assert any("bars/bands: quartiles" in n for n in plot_data(attention_rows()).notes)


def test_an_outlier_does_not_compress_the_other_curves() -> None:
    """trig@iid at ~10² beside errors below 1: the log axis stops a few upper quartiles up and a
    note names the curve above it."""
    rows = attention_rows()
    trig = rows["estimator"] == "trig@iid"
    rows.loc[trig, "value"] = 20 * rows.loc[trig, "value"]  # ~10², as the paper profile's trig
    data = plot_data(rows)
    top = data.y_range[1]
    trig = [v for s in data.series if s.label == "trig@iid" for v in s.y if v is not None]
    assert max(trig) > top and top < 10
    others = [v for s in data.series if s.label != "trig@iid" for v in s.y if v is not None]
    assert max(others) < top
    assert any(note.startswith("trig@iid: values up to") for note in data.notes)


def test_a_users_file_is_named_by_its_file_name_in_the_title() -> None:
    rows = pointwise_rows().assign(dataset="/home/me/deep/folder/qkv.npz@0123456789abcdef")
    title = plot_data(rows).title
    assert "qkv.npz" in title and "/home/me" not in title and "@0123" not in title
