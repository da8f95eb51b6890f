"""Choose what the chart of a result file shows, from what varies in its rows (scales:
:mod:`rfbench.present.plots.scales`).

A result file is tidy (one row per point and metric), so one rule serves every experiment:

- the **metric** is the first headline metric present, preferring one whose closed form
  (``theory_<metric>``) is in the rows too: that is drawn dashed in the estimator's colour;
- a setting that is fixed over the rows goes into the **title**, in words;
- a setting fixed per estimator (pointwise's m for hybrids and base estimators) goes into the
  **legend** label; an estimator with no feature budget (``exact``, ``uniform``) is a **baseline**:
  a grey reference line, horizontal when it has no x;
- a text setting (data set, regime, part) splits the chart into **panels** (a few at most; the
  rest is left to the file, with a note);
- the **x axis** is the numeric setting that varies along a curve (θ, σ, m/d, r, m, …); settings
  that follow from x (features, projections) are not split on; x values that are different inputs
  (pairs of a user's data, with their own norms) are drawn as points;
- what still varies is the **distribution** of the metric when it is a replicate index (head,
  repetition): median with a quartile band; a few-valued parameter becomes panels; otherwise
  one value is shown and a note says which.

An experiment whose rows need more (attention keeps baselines and swap scores in the same file,
cost plots error against time) declares a :class:`~rfbench.present.summaries.View` in its
presentation: what it declares is taken, the rest chosen as above, once, by :func:`infer_layout`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from rfbench.compute.schema import DERIVED_COLUMNS, HEADLINE_METRICS, HIGHER_IS_BETTER
from rfbench.present.plots import scales, style, words
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
from rfbench.present.summaries import View, view_of

#: Candidate x axes, in order of preference.
X_AXES = ("theta", "sigma", "m_per_d", "r", "m", "n", "d", "L", "layer", "passes", "v")
#: Bookkeeping columns, which never split a chart (nor does a derived column: :func:`_setting`)
BOOKKEEPING = {
    "experiment", "figure", "metric", "value", "stderr", "n_trials", "note", "reference", "bound",
}  # fmt: skip
#: Settings fixed over a chart are named in its title in this order.
TITLE_ORDER = ("kernel", "dataset", "r", "d", "budget", "m", "n", "sigma", "theta")
#: Integer columns that index replicates of one setting: always a distribution, never an axis.
REPLICATES = ("rep", "head", "seed")
MAX_PANELS = 9
#: beyond this many estimators a chart shows the SHOWN_BEST best of them
MAX_ESTIMATORS, SHOWN_BEST = 24, 12
#: a parameter with at most this many values may become panels
FEW = 4


def plot_data(rows: pd.DataFrame, view: View | None = None) -> PlotData | None:
    """What to draw for ``rows`` (one result file) seen through ``view`` (default: the one its
    experiment declares), or None when nothing varies."""
    if rows.empty:
        return None
    if view is None:
        view = view_of(str(rows["experiment"].iloc[0]))
    rows, notes = _restrict(rows.reset_index(drop=True), view)
    metric = view.metric if view.metric in set(rows["metric"]) else _headline(rows)
    if metric is None:
        return None
    main = rows[rows["metric"] == metric]
    theory = rows[rows["metric"] == f"theory_{metric}"]
    if view.x_metric:
        main, theory = (_with_metric(part, rows, view.x_metric) for part in (main, theory))
    layout = infer_layout(main, theory, metric, view, notes)
    return None if layout is None else _plot_data(layout)


def _restrict(rows: pd.DataFrame, view: View) -> tuple[pd.DataFrame, list[str]]:
    notes = []
    for column, allowed in view.where.items():
        if column in rows:
            before = rows[column].nunique()
            rows = rows[rows[column].isin(allowed) | (rows[column].isna() & (None in allowed))]
            shown = [str(v) for v in allowed if v is not None]
            if before > rows[column].nunique():
                notes.append(f"{column} {', '.join(shown)} shown (of {before} in the file)")
    if view.drop_estimators:
        rows = rows[~rows["estimator"].isin(view.drop_estimators)]
    if "figure" in rows and rows["figure"].nunique() > 1:
        figures = list(dict.fromkeys(rows["figure"]))
        rows = rows[rows["figure"] == figures[0]]
        notes.append(f"{figures[0]} shown; the file also holds {', '.join(figures[1:])}")
    return rows, notes


def _headline(rows: pd.DataFrame) -> str | None:
    present = set(rows["metric"])
    candidates = [m for m in HEADLINE_METRICS if m in present]
    with_theory = [m for m in candidates if f"theory_{m}" in present]
    if candidates:
        return (with_theory or candidates)[0]
    # a plugin's own metrics: the first measured one
    return next((m for m in dict.fromkeys(rows["metric"]) if not m.startswith("theory_")), None)


def _setting(column: str) -> bool:
    """Whether a column may set rows apart in a chart: not bookkeeping, and not computed from a
    row's own measurement or its estimator (a verdict, a stopping reason, an anytime interval:
    :data:`rfbench.compute.schema.DERIVED_COLUMNS`, plugins' included)."""
    return column not in BOOKKEEPING and column not in DERIVED_COLUMNS


def _with_metric(part: pd.DataFrame, rows: pd.DataFrame, x_metric: str) -> pd.DataFrame:
    """``part`` with a column ``x_metric``: that metric's value at the same settings."""
    other = rows[rows["metric"] == x_metric]
    keys = [c for c in part.columns if _setting(c) and c in other.columns]
    keys = [c for c in keys if part[c].notna().any() and other[c].notna().any()]
    x = other[keys + ["value"]].rename(columns={"value": x_metric})
    x = x.drop_duplicates(keys)
    return part.merge(x, on=keys, how="inner")


def _varies(df: pd.DataFrame, column: str) -> bool:
    return column in df and df[column].nunique(dropna=True) > 1


def _determines(df: pd.DataFrame, keys: Sequence[str], column: str) -> bool:
    """Whether ``column`` has one value per combination of ``keys`` (NA counted as a value)."""
    if not keys:
        return df[column].nunique(dropna=False) <= 1
    groups = df.groupby(list(keys), dropna=False, sort=False)[column]
    return bool((groups.nunique(dropna=False) <= 1).all())


def _numeric(df: pd.DataFrame, column: str) -> bool:
    kind = df[column].dtype
    return pd.api.types.is_numeric_dtype(kind) and not pd.api.types.is_bool_dtype(kind)


def _integer(df: pd.DataFrame, column: str) -> bool:
    return pd.api.types.is_integer_dtype(df[column].dtype)


def _values(df: pd.DataFrame, column: str) -> list:
    """Distinct non-missing values of a column, sorted when they can be."""
    values = list(dict.fromkeys(df[column].dropna().tolist()))
    try:
        return sorted(values)
    except TypeError:
        return values


def _plain(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class _Rows:
    """The rows of a chart: its metric's (``main``, baselines included), their closed forms
    (``theory``), the measured estimators' (``measured``: ``main`` without the baselines), and the
    notes saying what was left out."""

    main: pd.DataFrame
    theory: pd.DataFrame
    measured: pd.DataFrame
    notes: tuple[str, ...]

    def fix(self, column: str, df: pd.DataFrame, value: object = None) -> _Rows:
        """Show one value of ``column`` (the first in ``df`` unless given) and say so."""
        values = list(dict.fromkeys(df[column].dropna().tolist()))
        chosen = values[0] if value is None else value
        keep = lambda d: d[d[column].isna() | (d[column] == chosen)]  # noqa: E731
        note = (
            f"{words.setting(column, _plain(chosen))} shown "
            f"(of {len(values)} {column} values in the file)"
        )
        return _Rows(keep(self.main), keep(self.theory), keep(self.measured), (*self.notes, note))


@dataclass(frozen=True)
class Layout:
    """The choices for one chart, made once by :func:`infer_layout`: the rows drawn, the baselines,
    the columns naming each estimator in the legend (``labels``), split into panels, on the x axis
    and summarised as a distribution (``aggregate``), and how the curves are drawn."""

    rows: _Rows
    metric: str
    view: View
    settings: tuple[str, ...]
    baselines: tuple[str, ...]
    labels: tuple[str, ...]
    panels: tuple[str, ...]
    x: str | None
    aggregate: tuple[str, ...]
    bands: bool
    points: bool
    colours: dict[str, tuple[str, str]]


def infer_layout(
    main: pd.DataFrame, theory: pd.DataFrame, metric: str, view: View, notes: Sequence[str] = ()
) -> Layout | None:
    """The chart of ``main`` (one metric's rows) and ``theory`` (their closed forms): what the
    ``view`` declares, the rest chosen in order from what varies in the rows (baselines, panels,
    x, what still varies); None when nothing is left to draw."""
    settings = [c for c in main.columns if _setting(c) and c != "estimator" and _varies(main, c)]
    if view.x_metric and view.x_metric not in settings:
        settings.append(view.x_metric)
    baselines = _baselines(main, settings, view)
    measured = main[~main["estimator"].isin(baselines)]
    if measured.empty:
        return None
    rows = _Rows(main, theory, measured, tuple(notes))
    labels, panels, numeric, rows = _split_settings(rows, settings, view)
    x = _choose_x(rows.measured, panels, numeric, view)
    panels, aggregate, bands, rows = _settle_rest(rows, panels, numeric, x, view)
    estimators = list(dict.fromkeys(rows.measured["estimator"]))
    if len(estimators) > MAX_ESTIMATORS:
        estimators, rows = _best(rows, estimators, baselines, metric)
    if x is None and len(estimators) < 2 and not panels:
        return None
    points = x is not None and _points(rows.measured, x, panels)
    return Layout(rows, metric, view, tuple(settings), tuple(baselines), tuple(labels),
                  tuple(panels), x, tuple(aggregate), bands, points,
                  style.assign(estimators))  # fmt: skip


def _baselines(main: pd.DataFrame, settings: Sequence[str], view: View) -> list[str]:
    """Estimators without a feature budget when the others have one (exact, uniform)."""
    budget = view.budget
    if budget not in settings and budget not in main:
        return list(view.baselines)
    has_m = main.groupby("estimator", sort=False)[budget].apply(lambda s: s.notna().any())
    if not has_m.any():
        return list(view.baselines)
    return list(dict.fromkeys([*view.baselines, *has_m[~has_m].index]))


def _split_settings(
    rows: _Rows, settings: Sequence[str], view: View
) -> tuple[list[str], list[str], list[str], _Rows]:
    """The settings fixed per estimator (legend labels), the text settings split into panels
    (or fixed to one value beyond :data:`MAX_PANELS`), and the numeric settings left."""
    measured = rows.measured
    per_estimator = [c for c in settings if _determines(measured, ["estimator"], c)]
    labels = [
        c for c in per_estimator
        if _numeric(measured, c) and measured[c].nunique(dropna=False) > 1
    ]  # fmt: skip
    rest = [c for c in settings if c not in per_estimator]
    text = [c for c in rest if not _numeric(measured, c) and c != view.x]
    text.sort(key=lambda c: -measured[c].nunique())
    panels: list[str] = []
    for column in text:
        if any(_determines(measured, [p], column) for p in panels):
            continue
        if _panel_count(measured, [*panels, column]) <= MAX_PANELS:
            panels.append(column)
        else:
            rows = rows.fix(column, measured)
    numeric = [c for c in rest if c not in text]
    panels += [c for c in view.panels if c in numeric and c not in panels]
    return labels, panels, numeric, rows


def _panel_count(df: pd.DataFrame, columns: Sequence[str]) -> int:
    return math.prod(max(1, df[c].nunique()) for c in columns)


def _choose_x(
    measured: pd.DataFrame, panels: Sequence[str], numeric: Sequence[str], view: View
) -> str | None:
    keys = [*panels, "estimator"]
    free = [c for c in numeric if not (panels and _determines(measured, panels, c))]
    along = [
        c for c in free if c not in REPLICATES and c not in view.aggregate
        and measured.groupby(keys, dropna=False)[c].nunique().max() > 1
    ]  # fmt: skip
    if view.x in along:
        return view.x
    preferred = [c for c in X_AXES if c in along]
    others = sorted((c for c in along if c not in X_AXES), key=lambda c: -measured[c].nunique())
    ranked = preferred + others
    grid = [c for c in ranked if _on_a_grid(measured, panels, c)]
    return (grid or ranked or [None])[0]


def _on_a_grid(measured: pd.DataFrame, panels: Sequence[str], column: str) -> bool:
    """Whether the estimators share ``column``'s values (m = 8, 16, 32 for all) rather than each
    having its own (a σ tuned per estimator): a shared grid makes a better x axis."""
    by_panel = measured.groupby(list(panels), dropna=False) if panels else [(None, measured)]
    for _, part in by_panel:
        per_estimator = part.groupby("estimator")[column].nunique().mean()
        if part[column].nunique() > 1.5 * per_estimator:
            return False
    return True


def _settle_rest(
    rows: _Rows, panels: Sequence[str], numeric: Sequence[str], x: str | None, view: View
) -> tuple[list[str], list[str], bool, _Rows]:
    """Columns still varying within a panel, estimator and x: a distribution, panels or one
    value; returns the panels, the distribution's columns, whether to draw its quartiles, and
    the rows."""
    panels, aggregate = list(panels), []
    measured = rows.measured
    keys = [*panels, "estimator", *([x] if x else [])]
    derived: set[str] = set()
    for column in numeric:
        if column == x or _determines(measured, keys, column):
            continue
        # a setting that follows from the others (attention's features = min(F, T) for the
        # exact-at-T methods) is not split on: fixing it would slice away whole curves
        others = [c for c in numeric if c != column and c not in derived and c != x]
        if others and _determines(measured, [*keys, *others], column):
            derived.add(column)
            continue
        if panels and _determines(measured, panels, column):
            continue
        n = measured[column].nunique()
        replicate = column in REPLICATES or (
            _integer(measured, column) and n > FEW and column not in X_AXES
        )
        if column in view.aggregate or replicate:
            aggregate.append(column)
        elif n <= FEW and _panel_count(measured, [*panels, column]) <= MAX_PANELS:
            panels.append(column)
        else:
            values = _values(measured, column)
            rows = rows.fix(column, measured, values[len(values) // 2])
            measured = rows.measured
        keys = [*panels, "estimator", *([x] if x else [])]
    # a column that varied only through rows fixed away since (another sequence length)
    aggregate = [
        c for c in aggregate
        if c in REPLICATES or c in view.aggregate or not _determines(measured, keys, c)
    ]  # fmt: skip
    bands = True
    if aggregate:
        counts = ", ".join(f"{measured[c].nunique()} {c}s" for c in aggregate)
        curves = measured.groupby(panels or (lambda _: 0), dropna=False)["estimator"]
        bands = view.spread and int(curves.nunique().max()) <= MAX_BANDS
        band = "; bars/bands: quartiles" if bands else ""
        if view.spread and not bands:
            band = f"; quartiles not drawn (more than {MAX_BANDS} curves a panel)"
        rows = replace(rows, notes=(*rows.notes, f"median over {counts}{band}"))
    return panels, aggregate, bands, rows


def _best(
    rows: _Rows, estimators: list[str], baselines: Sequence[str], metric: str
) -> tuple[list[str], _Rows]:
    """The :data:`SHOWN_BEST` estimators with the best median metric (a grid of a hundred
    estimators is a thicket of lines); the others stay in the file, a note says so."""
    higher = metric in HIGHER_IS_BETTER
    median = rows.measured.groupby("estimator", sort=False)["value"].median()
    best = median.sort_values(ascending=not higher).index[:SHOWN_BEST]
    kept = [e for e in estimators if e in set(best)]
    word = "highest" if higher else "lowest"
    note = (
        f"the {len(kept)} of {len(estimators)} estimators with the {word} median "
        f"{words.short_metric(metric)} shown; all are in the file"
    )
    theory, measured = (d[d["estimator"].isin(kept)] for d in (rows.theory, rows.measured))
    main = rows.main[rows.main["estimator"].isin([*kept, *baselines])]
    return kept, _Rows(main, theory, measured, (*rows.notes, note))


def _points(measured: pd.DataFrame, x: str, panels: Sequence[str]) -> bool:
    """The x values are different inputs (a user's pairs with their own norms, the same for every
    estimator): no lines between them."""
    keys = [*panels, x]
    return any(
        _setting(c) and c not in keys
        and _varies(measured, c) and _determines(measured, keys, c)
        and not _integer(measured, c) and _numeric(measured, c)
        and not (panels and _determines(measured, panels, c))
        for c in measured.columns
    )  # fmt: skip


def _plot_data(layout: Layout) -> PlotData | None:
    """The neutral plot data of a chart's layout."""
    x, view, measured = layout.x, layout.view, layout.rows.measured
    keys = itertools.product(*(_values(measured, c) for c in layout.panels))
    panels = [_panel(layout, key) for key in keys]
    panels = [p for p in panels if any(v is not None for s in p.series for v in s.y)]
    if not panels:
        return None
    data = PlotData(
        title=_title(layout),
        x_label=words.parameter_words(x or "estimator"),
        y_label=words.metric_words(layout.metric),
        panels=panels,
        categorical=x is None,
        notes=list(layout.rows.notes),
        spread=view.spread and layout.bands,
    )
    data.x_log = x is not None and (view.x_log or scales.spans(measured[x], scales.X_LOG_SPAN))
    if x == "theta":
        data.x_ticks = scales.angle_ticks(measured[x])
    # a log axis only for a chart with a positive measured value (window and top-k exact at
    # F >= T are all 0: they are drawn on a linear axis, not left off an empty log one)
    positive = any(v is not None and v > 0 for s in data.series if s.kind != LEVEL for v in s.y)
    scales.set_y_scale(data, always=bool(view.y_log) and positive)
    if data.y_log:
        scales.drop_empty_panels(data)
    return data if data.panels else None


def _in_panel(df: pd.DataFrame, panels: Sequence[str], key: tuple) -> pd.DataFrame:
    for column, value in zip(panels, key, strict=True):
        if column in df:
            df = df[df[column].isna() | (df[column] == value)]
    return df


def _panel(layout: Layout, key: tuple) -> Panel:
    every = layout.rows.main
    main = _in_panel(every, layout.panels, key)
    theory = _in_panel(layout.rows.theory, layout.panels, key)
    measured = main[~main["estimator"].isin(layout.baselines)]
    fixed = []
    for column in (c for c in layout.settings if c not in layout.panels):
        if column in measured and measured[column].nunique() == 1 and every[column].nunique() > 1:
            if column not in layout.labels and column != layout.x and _numeric(measured, column):
                fixed.append(words.setting(column, _plain(measured[column].dropna().iloc[0])))
    title = ", ".join(
        [words.setting(c, _plain(v)) for c, v in zip(layout.panels, key, strict=True)] + fixed
    )
    panel = Panel(title)
    label_of = _labels(measured, layout.labels)
    for estimator in dict.fromkeys(measured["estimator"]):
        colour, mark = layout.colours[estimator]
        part = measured[measured["estimator"] == estimator]
        panel.series.append(_series(layout, part, label_of[estimator], MEASURED, colour, mark))
        closed = theory[theory["estimator"] == estimator]
        if not closed.empty:
            series = _series(layout, closed, "closed form", THEORY, colour, mark)
            if layout.x is None:
                series.x = [label_of[estimator]]
            panel.series.append(series)
    for i, name in enumerate(b for b in layout.baselines if b in set(main["estimator"])):
        part = main[main["estimator"] == name]
        kind = BASELINE if layout.x and part[layout.x].notna().any() else LEVEL
        panel.series.append(_series(layout, part, name, kind, style.grey(i), ""))
    return panel


def _labels(measured: pd.DataFrame, labels: Sequence[str]) -> dict[str, str]:
    out = {}
    for estimator, part in measured.groupby("estimator", sort=False):
        sizes = [
            words.setting(c, _plain(part[c].dropna().iloc[0]))
            for c in labels if part[c].notna().any()
        ]  # fmt: skip
        out[estimator] = f"{estimator} ({', '.join(sizes)})" if sizes else str(estimator)
    return out


def _series(
    layout: Layout, part: pd.DataFrame, label: str, kind: str, colour: str, mark: str
) -> Series:
    x = layout.x
    if x is None or kind == LEVEL or (x not in part or part[x].isna().all()):
        y, lo, hi = _point(part, layout.aggregate)
        if x is not None and kind != THEORY:  # a level: the renderer draws it across the axis
            kind = LEVEL
        xs, legend = ([label], kind != MEASURED) if x is None else ([], True)
        return Series(label, xs, [y], kind, colour, mark, [lo], [hi], legend=legend)
    groups = part[part[x].notna()].groupby(x, sort=True)
    points = [(_plain(value), *_point(at, layout.aggregate)) for value, at in groups]
    xs, ys, los, his = (list(column) for column in zip(*points, strict=True))
    return Series(label, xs, ys, kind, colour, mark, los, his, points=layout.points)


def _point(
    part: pd.DataFrame, aggregate: Sequence[str]
) -> tuple[float | None, float | None, float | None]:
    """The value at one point: the median and quartiles over replicates, else the value ± its
    standard error where the sample resolves it."""
    values = part["value"].astype(float)
    if aggregate and len(part) > 1:
        q = values.quantile([0.25, 0.5, 0.75]).tolist()
        return _finite(q[1]), _finite(q[0]), _finite(q[2])
    y = _finite(values.iloc[0])
    se = part["stderr"].astype(float).iloc[0] if "stderr" in part else float("nan")
    if "resolved" in part and part["resolved"].iloc[0] is not pd.NA:
        se = se if bool(part["resolved"].iloc[0]) else float("nan")
    if y is None or not math.isfinite(se) or se <= 0:
        return y, None, None
    return y, y - se, y + se


def _title(layout: Layout) -> str:
    measured, x = layout.rows.measured, layout.x
    fixed = [
        words.setting(c, _plain(measured[c].dropna().iloc[0]))
        for c in TITLE_ORDER
        if c in measured and measured[c].nunique() == 1 and measured[c].notna().all()
        and c not in layout.labels
    ]  # fmt: skip
    what = words.short_metric(layout.metric)
    what += f" vs {words.parameter_words(x).split(' (')[0]}" if x else " per estimator"
    what = what[0].upper() + what[1:] if not fixed else what
    return f"{', '.join(fixed)}: {what}" if fixed else what


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
