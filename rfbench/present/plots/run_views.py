"""Per-experiment hints for the per-run chart (:mod:`rfbench.present.plots.choose`), where the
rows alone do not say what to show; a plugin experiment adds its own with :func:`register_hint`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Hint:
    """What one experiment's chart shows, where the generic choice would miss it.

    Parameters
    ----------
    metric
        The metric drawn (else the first headline metric present).
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


HINTS: dict[str, Hint] = {
    # docs/experiments.md#attention (Figures); the swap-in scores and the rank-r oracle left out
    "attention": Hint(
        metric="out_rel_frob",
        x="budget",
        where={"kind": ("heads", "baselines")},
        drop_estimators=("best-rank", "exact"),
        baselines=("uniform", "zero"),
        aggregate=("head",),
        y_log=True,
        budget="budget",
        panels=("layer",),
        x_log=True,
    ),  # fmt: skip
    # the error-cost frontier: error against wall time, one curve per estimator through its m
    "cost": Hint(
        metric="rms_rel_frob",
        x="time_s",
        x_metric="time_s",
        where={"part": ("frontier",), "step": ("total", None)},
        y_log=True,
    ),  # fmt: skip
    # the error the dtype adds, in units of the Monte Carlo error, per dtype, over r; the median
    # over angles (as the paper-style figure beyond-precision-error shows it), for rfbench's
    # log-space form and the IID couplings (the couplings change little; beyond-precision maps all)
    "precision": Hint(
        metric="dtype_to_mc",
        x="r",
        where={"form": ("logspace",), "weights": ("iid",)},
        aggregate=("theta",),
        spread=False,
    ),  # fmt: skip
}


def register_hint(experiment: str, hint: Hint) -> None:
    """Give ``experiment``'s per-run chart a hint (a plugin experiment's, say)."""
    HINTS[experiment] = hint


def hint_for(experiment: str) -> Hint:
    return HINTS.get(experiment, Hint())
