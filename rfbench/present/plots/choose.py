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
cost plots error against time) gives a :class:`~rfbench.present.plots.run_views.Hint`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rfbench.present.plots import palette, scales, words
from rfbench.present.plots.run_views import Hint, hint_for
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

#: Metrics shown first when present (the quantity each paper figure plots).
HEADLINE = (
    "rel_rmse", "accuracy", "log_rel_var", "rel_frob", "mse", "frob_sq", "theory_rel_rmse",
    "rel_mae", "nonfinite_fraction", "time_s",
)  # fmt: skip
#: Candidate x axes, in order of preference.
X_AXES = ("theta", "sigma", "m_per_d", "r", "m", "n", "d", "L", "layer", "passes", "v")
#: Columns that never split a chart: bookkeeping and verdicts about a row.
NOT_SETTINGS = {
    "experiment", "figure", "metric", "value", "stderr", "n_trials", "resolved", "note",
    "reference", "beats_uniform", "bound", "z_uniform",
}  # fmt: skip
#: Settings fixed over a chart are named in its title in this order.
TITLE_ORDER = ("kernel", "dataset", "r", "d", "budget", "m", "n", "sigma", "theta")
#: Integer columns that index replicates of one setting: always a distribution, never an axis.
REPLICATES = ("rep", "head", "seed")
MAX_PANELS = 9
#: beyond this many estimators a chart shows the SHOWN_BEST best of them
MAX_ESTIMATORS, SHOWN_BEST = 24, 12
#: metrics where larger is better (the others are errors, costs or fractions of failures)
HIGHER_IS_BETTER = {"accuracy", "val_accuracy", "swap_cosine", "swap_spearman", "rf_conformity"}
#: a parameter with at most this many values may become panels
FEW = 4


def plot_data(rows: pd.DataFrame, hint: Hint | None = None) -> PlotData | None:
    """What to draw for ``rows`` (one result file), or None when nothing varies."""
    if rows.empty:
        return None
    if hint is None:
        hint = hint_for(str(rows["experiment"].iloc[0]))
    rows, notes = _restrict(rows.reset_index(drop=True), hint)
    metric = hint.metric if hint.metric in set(rows["metric"]) else _headline(rows)
    if metric is None:
        return None
    main = rows[rows["metric"] == metric]
    theory = rows[rows["metric"] == f"theory_{metric}"]
    if hint.x_metric:
        main, theory = (_with_metric(part, rows, hint.x_metric) for part in (main, theory))
    return _Layout(main, theory, metric, hint, notes).build()


def _restrict(rows: pd.DataFrame, hint: Hint) -> tuple[pd.DataFrame, list[str]]:
    notes = []
    for column, allowed in hint.where.items():
        if column in rows:
            before = rows[column].nunique()
            rows = rows[rows[column].isin(allowed) | (rows[column].isna() & (None in allowed))]
            shown = [str(v) for v in allowed if v is not None]
            if before > rows[column].nunique():
                notes.append(f"{column} {', '.join(shown)} shown (of {before} in the file)")
    if hint.drop_estimators:
        rows = rows[~rows["estimator"].isin(hint.drop_estimators)]
    if "figure" in rows and rows["figure"].nunique() > 1:
        figures = list(dict.fromkeys(rows["figure"]))
        rows = rows[rows["figure"] == figures[0]]
        notes.append(f"{figures[0]} shown; the file also holds {', '.join(figures[1:])}")
    return rows, notes


def _headline(rows: pd.DataFrame) -> str | None:
    present = set(rows["metric"])
    candidates = [m for m in HEADLINE if m in present]
    with_theory = [m for m in candidates if f"theory_{m}" in present]
    if candidates:
        return (with_theory or candidates)[0]
    # a plugin's own metrics: the first measured one
    return next((m for m in dict.fromkeys(rows["metric"]) if not m.startswith("theory_")), None)


def _with_metric(part: pd.DataFrame, rows: pd.DataFrame, x_metric: str) -> pd.DataFrame:
    """``part`` with a column ``x_metric``: that metric's value at the same settings."""
    other = rows[rows["metric"] == x_metric]
    keys = [c for c in part.columns if c not in NOT_SETTINGS and c in other.columns]
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
    if isinstance(value, np.generic):
        return value.item()
    return value


class _Layout:
    """The choices for one chart, made in order: baselines, panels, x, what still varies."""

    def __init__(
        self, main: pd.DataFrame, theory: pd.DataFrame, metric: str, hint: Hint, notes: list[str]
    ) -> None:
        self.main, self.theory, self.metric, self.hint = main, theory, metric, hint
        self.notes = list(notes)
        self.settings = [
            c for c in main.columns if c not in NOT_SETTINGS and c != "estimator"
            and _varies(main, c)
        ]  # fmt: skip
        if hint.x_metric and hint.x_metric not in self.settings:
            self.settings.append(hint.x_metric)

    # ------------------------------------------------------------------ choices
    def _baselines(self) -> list[str]:
        """Estimators without a feature budget when the others have one (exact, uniform)."""
        budget = self.hint.budget
        if budget not in self.settings and budget not in self.main:
            return list(self.hint.baselines)
        has_m = self.main.groupby("estimator", sort=False)[budget].apply(lambda s: s.notna().any())
        if not has_m.any():
            return list(self.hint.baselines)
        return list(dict.fromkeys([*self.hint.baselines, *has_m[~has_m].index]))

    def _split_settings(self, measured: pd.DataFrame) -> None:
        per_estimator = [c for c in self.settings if _determines(measured, ["estimator"], c)]
        self.labels = [
            c for c in per_estimator
            if _numeric(measured, c) and measured[c].nunique(dropna=False) > 1
        ]  # fmt: skip
        rest = [c for c in self.settings if c not in per_estimator]
        text = [c for c in rest if not _numeric(measured, c) and c != self.hint.x]
        text.sort(key=lambda c: -measured[c].nunique())
        self.panels: list[str] = []
        for column in text:
            if any(_determines(measured, [p], column) for p in self.panels):
                continue
            if self._panel_count(measured, [*self.panels, column]) <= MAX_PANELS:
                self.panels.append(column)
            else:
                self._fix(column, measured)
        self.numeric = [c for c in rest if c not in text]
        self.panels += [c for c in self.hint.panels if c in self.numeric and c not in self.panels]

    def _panel_count(self, df: pd.DataFrame, columns: Sequence[str]) -> int:
        return math.prod(max(1, df[c].nunique()) for c in columns)

    def _fix(self, column: str, df: pd.DataFrame, value: object = None) -> None:
        """Show one value of ``column`` (the first in the file unless given) and say so."""
        values = list(dict.fromkeys(df[column].dropna().tolist()))
        chosen = values[0] if value is None else value
        keep = lambda d: d[d[column].isna() | (d[column] == chosen)]  # noqa: E731
        self.main, self.theory = keep(self.main), keep(self.theory)
        self.notes.append(
            f"{words.setting(column, _plain(chosen))} shown "
            f"(of {len(values)} {column} values in the file)"
        )

    def _choose_x(self, measured: pd.DataFrame) -> str | None:
        keys = [*self.panels, "estimator"]
        free = [
            c for c in self.numeric if not (self.panels and _determines(measured, self.panels, c))
        ]
        along = [
            c for c in free if c not in REPLICATES and c not in self.hint.aggregate
            and measured.groupby(keys, dropna=False)[c].nunique().max() > 1
        ]  # fmt: skip
        if self.hint.x in along:
            return self.hint.x
        preferred = [c for c in X_AXES if c in along]
        others = sorted((c for c in along if c not in X_AXES), key=lambda c: -measured[c].nunique())
        ranked = preferred + others
        grid = [c for c in ranked if self._on_a_grid(measured, c)]
        return (grid or ranked or [None])[0]

    def _on_a_grid(self, measured: pd.DataFrame, column: str) -> bool:
        """Whether the estimators share ``column``'s values (m = 8, 16, 32 for all) rather than
        each having its own (a σ tuned per estimator): a shared grid makes a better x axis."""
        panels = measured.groupby(self.panels, dropna=False) if self.panels else [(None, measured)]
        for _, part in panels:
            per_estimator = part.groupby("estimator")[column].nunique().mean()
            if part[column].nunique() > 1.5 * per_estimator:
                return False
        return True

    def _settle_rest(self, measured: pd.DataFrame, x: str | None) -> None:
        """Columns still varying within a panel, estimator and x: a distribution, panels or one
        value."""
        self.aggregate: list[str] = []
        keys = [*self.panels, "estimator", *([x] if x else [])]
        derived: set[str] = set()
        for column in self.numeric:
            if column == x or _determines(measured, keys, column):
                continue
            # a setting that follows from the others (attention's features = min(F, T) for the
            # exact-at-T methods) is not split on: fixing it would slice away whole curves
            others = [c for c in self.numeric if c != column and c not in derived and c != x]
            if others and _determines(measured, [*keys, *others], column):
                derived.add(column)
                continue
            if self.panels and _determines(measured, self.panels, column):
                continue
            n = measured[column].nunique()
            replicate = column in REPLICATES or (
                _integer(measured, column) and n > FEW and column not in X_AXES
            )
            if column in self.hint.aggregate or replicate:
                self.aggregate.append(column)
            elif n <= FEW and self._panel_count(measured, [*self.panels, column]) <= MAX_PANELS:
                self.panels.append(column)
            else:
                values = _values(measured, column)
                self._fix(column, measured, values[len(values) // 2])
                measured = self.main[~self.main["estimator"].isin(self.baseline_names)]
            keys = [*self.panels, "estimator", *([x] if x else [])]
        # a column that varied only through rows fixed away since (another sequence length)
        measured = self.main[~self.main["estimator"].isin(self.baseline_names)]
        self.aggregate = [
            c for c in self.aggregate
            if c in REPLICATES or c in self.hint.aggregate or not _determines(measured, keys, c)
        ]  # fmt: skip
        if self.aggregate:
            counts = ", ".join(f"{measured[c].nunique()} {c}s" for c in self.aggregate)
            curves = measured.groupby(self.panels or (lambda _: 0), dropna=False)["estimator"]
            self.bands = self.hint.spread and int(curves.nunique().max()) <= MAX_BANDS
            band = "; bars/bands: quartiles" if self.bands else ""
            if self.hint.spread and not self.bands:
                band = f"; quartiles not drawn (more than {MAX_BANDS} curves a panel)"
            self.notes.append(f"median over {counts}{band}")

    # ------------------------------------------------------------------ build
    def build(self) -> PlotData | None:
        self.baseline_names = self._baselines()
        measured = self.main[~self.main["estimator"].isin(self.baseline_names)]
        if measured.empty:
            return None
        self._split_settings(measured)
        measured = self.main[~self.main["estimator"].isin(self.baseline_names)]
        x = self._choose_x(measured)
        self._settle_rest(measured, x)
        measured = self.main[~self.main["estimator"].isin(self.baseline_names)]
        estimators = list(dict.fromkeys(measured["estimator"]))
        if len(estimators) > MAX_ESTIMATORS:
            estimators = self._best(measured, estimators)
            measured = measured[measured["estimator"].isin(estimators)]
        if x is None and len(estimators) < 2 and not self.panels:
            return None
        self.x = x
        self.points = x is not None and self._points(measured, x)
        self.colours = palette.assign(estimators)
        panels = [self._panel(key) for key in self._panel_keys(measured)]
        panels = [p for p in panels if any(v is not None for s in p.series for v in s.y)]
        if not panels:
            return None
        data = PlotData(
            title=self._title(x),
            x_label=words.parameter_words(x or "estimator"),
            y_label=words.metric_words(self.metric),
            panels=panels,
            categorical=x is None,
            notes=self.notes,
            spread=self.hint.spread and getattr(self, "bands", True),
        )
        data.x_log = x is not None and (
            self.hint.x_log or scales.spans(measured[x], scales.X_LOG_SPAN)
        )
        if x == "theta":
            data.x_ticks = scales.angle_ticks(measured[x])
        # a log axis only for a chart with a positive measured value (window and top-k exact at
        # F >= T are all 0: they are drawn on a linear axis, not left off an empty log one)
        positive = any(v is not None and v > 0 for s in data.series if s.kind != LEVEL for v in s.y)
        scales.set_y_scale(data, always=bool(self.hint.y_log) and positive)
        if data.y_log:
            scales.drop_empty_panels(data)
        return data if data.panels else None

    def _best(self, measured: pd.DataFrame, estimators: list[str]) -> list[str]:
        """The :data:`SHOWN_BEST` estimators with the best median metric (a grid of a hundred
        estimators is a thicket of lines); the others stay in the file, a note says so."""
        higher = self.metric in HIGHER_IS_BETTER
        median = measured.groupby("estimator", sort=False)["value"].median()
        best = median.sort_values(ascending=not higher).index[:SHOWN_BEST]
        kept = [e for e in estimators if e in set(best)]
        self.main = self.main[
            self.main["estimator"].isin([*kept, *self.baseline_names])
        ]  # fmt: skip
        self.theory = self.theory[self.theory["estimator"].isin(kept)]
        word = "highest" if higher else "lowest"
        self.notes.append(
            f"the {len(kept)} of {len(estimators)} estimators with the {word} median "
            f"{words.short_metric(self.metric)} shown; all are in the file"
        )
        return kept

    def _points(self, measured: pd.DataFrame, x: str) -> bool:
        """The x values are different inputs (a user's pairs with their own norms, the same for
        every estimator): no lines between them."""
        keys = [*self.panels, x]
        inputs = [
            c for c in measured.columns if c not in NOT_SETTINGS and c not in keys
            and _varies(measured, c) and _determines(measured, keys, c)
            and not _integer(measured, c) and _numeric(measured, c)
            and not (self.panels and _determines(measured, self.panels, c))
        ]  # fmt: skip
        return bool(inputs)

    def _panel_keys(self, measured: pd.DataFrame) -> list[tuple]:
        return list(itertools.product(*(_values(measured, c) for c in self.panels)))

    def _in_panel(self, df: pd.DataFrame, key: tuple) -> pd.DataFrame:
        for column, value in zip(self.panels, key, strict=True):
            if column in df:
                df = df[df[column].isna() | (df[column] == value)]
        return df

    def _panel(self, key: tuple) -> Panel:
        main, theory = self._in_panel(self.main, key), self._in_panel(self.theory, key)
        fixed = []
        for column in (c for c in self.settings if c not in self.panels):
            part = main[~main["estimator"].isin(self.baseline_names)]
            if column in part and part[column].nunique() == 1 and self.main[column].nunique() > 1:
                if column not in self.labels and column != self.x and _numeric(part, column):
                    fixed.append(words.setting(column, _plain(part[column].dropna().iloc[0])))
        title = ", ".join(
            [words.setting(c, _plain(v)) for c, v in zip(self.panels, key, strict=True)] + fixed
        )
        panel = Panel(title)
        measured = main[~main["estimator"].isin(self.baseline_names)]
        label_of = self._labels(measured)
        for estimator in dict.fromkeys(measured["estimator"]):
            colour, mark = self.colours[estimator]
            part = measured[measured["estimator"] == estimator]
            panel.series.append(self._series(part, label_of[estimator], MEASURED, colour, mark))
            closed = theory[theory["estimator"] == estimator]
            if not closed.empty:
                series = self._series(closed, "closed form", THEORY, colour, mark)
                if self.x is None:
                    series.x = [label_of[estimator]]
                panel.series.append(series)
        for i, name in enumerate(b for b in self.baseline_names if b in set(main["estimator"])):
            part = main[main["estimator"] == name]
            kind = BASELINE if self.x and part[self.x].notna().any() else LEVEL
            panel.series.append(self._series(part, name, kind, palette.grey(i), ""))
        return panel

    def _labels(self, measured: pd.DataFrame) -> dict[str, str]:
        out = {}
        for estimator, part in measured.groupby("estimator", sort=False):
            sizes = [
                words.setting(c, _plain(part[c].dropna().iloc[0]))
                for c in self.labels if part[c].notna().any()
            ]  # fmt: skip
            out[estimator] = f"{estimator} ({', '.join(sizes)})" if sizes else str(estimator)
        return out

    def _series(self, part: pd.DataFrame, label: str, kind: str, colour: str, mark: str) -> Series:
        x = self.x
        if x is None or kind == LEVEL or (x not in part or part[x].isna().all()):
            xs = [label] if x is None else []
            y, lo, hi = self._summary(part)
            kind = kind if x is None else (LEVEL if kind != THEORY else THEORY)
            series = Series(label, xs, [y], kind, colour, mark, [lo], [hi])
            if x is not None:  # a level: the renderer draws it across the axis
                series.x = []
            series.legend = x is not None or kind != MEASURED
            return series
        groups = part[part[x].notna()].groupby(x, sort=True)
        points = [(_plain(value), *self._summary(at)) for value, at in groups]  # x, y, lo, hi
        xs, ys, los, his = (list(column) for column in zip(*points, strict=True))
        return Series(label, xs, ys, kind, colour, mark, los, his, points=self.points)

    def _summary(self, part: pd.DataFrame) -> tuple[float | None, float | None, float | None]:
        """The value at one point: the median and quartiles over replicates, else the value
        ± its standard error where the sample resolves it."""
        values = part["value"].astype(float)
        if self.aggregate and len(part) > 1:
            q = values.quantile([0.25, 0.5, 0.75]).tolist()
            return _finite(q[1]), _finite(q[0]), _finite(q[2])
        y = _finite(values.iloc[0])
        se = part["stderr"].astype(float).iloc[0] if "stderr" in part else float("nan")
        if "resolved" in part and part["resolved"].iloc[0] is not pd.NA:
            se = se if bool(part["resolved"].iloc[0]) else float("nan")
        if y is None or not math.isfinite(se) or se <= 0:
            return y, None, None
        return y, y - se, y + se

    def _title(self, x: str | None) -> str:
        measured = self.main[~self.main["estimator"].isin(self.baseline_names)]
        fixed = [
            words.setting(c, _plain(measured[c].dropna().iloc[0]))
            for c in TITLE_ORDER
            if c in measured and measured[c].nunique() == 1 and measured[c].notna().all()
            and c not in self.labels
        ]  # fmt: skip
        what = words.short_metric(self.metric)
        what += f" vs {words.parameter_words(x).split(' (')[0]}" if x else " per estimator"
        what = what[0].upper() + what[1:] if not fixed else what
        return f"{', '.join(fixed)}: {what}" if fixed else what


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
