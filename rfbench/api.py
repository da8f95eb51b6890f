"""The public surface of rfbench: everything a plugin or a library user imports.

A plugin (docs/extending.md) and a script using the estimator library (README.md, "The estimator
library") import from this module only::

    from rfbench.api import Component, Projections, Side, register_component, sq_norms

The names listed in ``__all__`` are the stable interface; where they are defined is not. The
layer packages — ``rfbench.compute.*`` (computing), ``rfbench.present.*`` (presentation) and
``rfbench.cli.*`` (command line) — are private: modules move between them as the code changes
(docs/architecture.md#layout), and a name moved there keeps its place here.

What is here
------------
Estimators
    The contract and its building blocks (:class:`Estimator`, :class:`Component`,
    :class:`WeightsSampler`, :class:`Projections`, :class:`Draw`, :class:`Features`,
    :class:`Parts`, the bipolar hybrid of HRF (Choromanski et al., 2022) Eq. 12), their
    registration (``register_component``, ``register_weights``, ``register_hybrid`` with
    :class:`HybridEntry`, ``register_alias``, ``register_theory``), the registry itself
    (``registry.get``, ``registry.describe``), the closed forms (``theory.mse``) and the exact
    kernels.
Experiments
    :class:`Experiment`, :class:`JobSpec`, :class:`ExperimentParams` with ``Values`` and
    ``Listed``, ``register_experiment``, ``register_metric`` and ``register_parameter`` for new
    result columns, ``run`` with :class:`RunOptions`, ``load_results``.
Presentation
    ``register_figure`` and the shared ``style``, an experiment's presentation
    (``register_presentation`` with its chart's :class:`View`), and what evaluates a report claim
    on result rows (``make_entry``, ``evaluate_claim``, :class:`ResultSet`, ``load_folder``).

Each name is imported from its home on first use, so ``import rfbench.api`` costs nothing and a
plugin pays only for what it uses (a feature function does not import matplotlib).
"""

from __future__ import annotations

from typing import Any

#: every public name, by the module that defines it (a submodule counts as a name of its package)
_HOMES: dict[str, tuple[str, ...]] = {
    "rfbench.compute.features": ("registry", "theory"),
    "rfbench.compute.features.base": (
        "Component",
        "Draw",
        "Estimator",
        "Features",
        "Parts",
        "Projections",
        "Side",
        "WeightsSampler",
        "check_inputs",
        "full_projections",
    ),
    "rfbench.compute.features.components": ("Sign",),
    "rfbench.compute.features.maps": ("half_sq", "project"),
    "rfbench.compute.features.hybrid": ("VARIANTS", "BipolarHybrid", "HybridBase"),
    "rfbench.compute.features.registry": (
        "HybridEntry",
        "register_alias",
        "register_component",
        "register_hybrid",
        "register_weights",
    ),
    "rfbench.compute.features.theory": ("register_theory",),
    "rfbench.compute.features.validation": ("check_pair",),
    "rfbench.compute.kernels": ("KERNELS", "gaussian_kernel", "softmax_kernel", "sq_norms"),
    "rfbench.compute.stats": ("mean_se",),
    "rfbench.compute.experiments": (
        "ConfigError",
        "DataFile",
        "Experiment",
        "JobSpec",
        "register_experiment",
    ),
    "rfbench.compute.experiments.params": ("ExperimentParams", "Listed", "Values"),
    "rfbench.compute.results": ("load_results", "register_metric", "register_parameter"),
    "rfbench.compute.runner": ("RunOptions", "run"),
    "rfbench.present.plots": ("register_figure", "style"),
    "rfbench.present.summaries": ("View", "register_presentation"),
    "rfbench.present.reference.loader": ("make_entry",),
    "rfbench.present.report.claims": ("evaluate_claim",),
    "rfbench.present.report.rows": ("ResultSet", "load_folder"),
    "rfbench.sklearn": ("RandomFeatures",),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(name for names in _HOMES.values() for name in names)


def __getattr__(name: str) -> Any:
    """The public ``name``, imported from its home as ``from <home> import <name>`` would."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(_HOME[name], fromlist=[name]), name)
    globals()[name] = value  # later lookups find it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
