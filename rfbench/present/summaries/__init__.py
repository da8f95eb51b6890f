"""Each experiment's presentation, declared once (docs/extending.md#presentation): the table its
command prints after a run and the view of its per-run chart, registered together with
:func:`register_presentation` — a built-in's in ``<experiment>.py`` of this package, a plugin's in
its own module. An experiment without one prints its first rows, and its chart is chosen from what
varies in the rows (:func:`rfbench.present.plots.choose.plot_data`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from rfbench.compute.plugins import BuiltinsThenPlugins, claim, import_submodules, tracked

Summary = Callable[[pd.DataFrame], pd.DataFrame]
#: rows printed after a run of an experiment that declares no summary
FIRST_ROWS = 12


@dataclass(frozen=True)
class View:
    """What an experiment's per-run chart shows; a field left at its default is chosen from what
    varies in the rows.

    Parameters
    ----------
    metric
        The metric drawn (else the first headline metric present,
        :data:`rfbench.compute.schema.HEADLINE_METRICS`).
    x
        The x axis, when it varies (else the first of the usual axes that does).
    x_metric
        Draw ``metric`` against this metric's value at the same settings (error vs time).
    where
        Keep only rows whose column holds one of these values (``None`` keeps missing values).
    drop_estimators
        Rows of these estimators are left out (oracles that are not comparable).
    baselines
        Estimators drawn as grey reference lines (besides those without a feature budget).
    aggregate
        Columns to summarise as a distribution (median, quartiles) rather than split on.
    y_log
        A log y axis whatever the span of the values.
    spread
        Draw error bars or quartile bands (not when they span decades and hide the medians).
    budget
        The column giving an estimator its feature budget: estimators without one are baselines.
    panels
        Numeric columns that always split the chart into panels (one per layer, say).
    x_log
        A log x axis whatever the span of the values (feature budgets 16, 64, 256).
    """

    metric: str | None = None
    x: str | None = None
    x_metric: str | None = None
    where: Mapping[str, tuple] = field(default_factory=dict)
    drop_estimators: tuple[str, ...] = ()
    baselines: tuple[str, ...] = ()
    aggregate: tuple[str, ...] = ()
    y_log: bool = False
    spread: bool = True
    budget: str = "m"
    panels: tuple[str, ...] = ()
    x_log: bool = False


@dataclass(frozen=True)
class Presentation:
    """An experiment's summary function (result rows -> the rows printed) and chart view."""

    summary: Summary
    view: View


PRESENTATIONS: dict[str, Presentation] = tracked({})


def register_presentation(
    experiment: str, view: View | None = None
) -> Callable[[Summary], Summary]:
    """Decorator: the function becomes ``experiment``'s terminal summary (the rows ``rfbench
    <experiment>`` prints after a run; ``attrs["title"]`` and ``attrs["caption"]`` are printed
    with them) and ``view`` (default: all chosen from the rows) its per-run chart's view. A name
    another module holds is refused."""

    def deco(summary: Summary) -> Summary:
        presentation = Presentation(summary, view or View())
        claim(PRESENTATIONS, "presentation", experiment, presentation, summary)
        return summary

    return deco


def load_builtins() -> None:
    """Import every presentation module of this package (registration happens on import)."""
    import_submodules(__name__)


#: the built-ins, then the plugins, on first use (rfbench.compute.plugins)
_load = BuiltinsThenPlugins(load_builtins)


def presentations() -> dict[str, Presentation]:
    """Every presentation by experiment name: the built-ins', then the plugins'."""
    _load()
    return dict(PRESENTATIONS)


def view_of(experiment: str) -> View:
    """The view ``experiment`` declares (all fields chosen from the rows when it declares none)."""
    presentation = presentations().get(experiment)
    return View() if presentation is None else presentation.view


def terminal_summary(experiment: str, results: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``results`` (a DataFrame) that ``rfbench <experiment>`` prints after a run:
    its declared summary, else the first :data:`FIRST_ROWS` rows."""
    presentation = presentations().get(experiment)
    return results.head(FIRST_ROWS) if presentation is None else presentation.summary(results)
