"""Experiments (docs/architecture.md#flow): one package per experiment, registered by name.

Each package (``pointwise``, ``gram``, ``classify``, …) holds in ``experiment.py`` an
:class:`~rfbench.compute.experiments.base.Experiment` subclass decorated with
:func:`~rfbench.compute.experiments.registry.register_experiment`, in ``params.py`` its parameter
model, and its helpers beside them; ``base``, ``chunks``, ``metrics``, ``params``, ``registry`` and
``shared`` are shared, and no experiment imports another.

The names below are the plugin API (docs/extending.md#experiment), re-exported from
:mod:`rfbench.compute.experiments.base` and :mod:`rfbench.compute.experiments.registry`; code in
rfbench imports them from those modules.
"""

from rfbench.compute.experiments.base import (
    PROFILES,
    RESERVED_KEYS,
    ConfigError,
    Experiment,
    JobSpec,
    ResolvedConfig,
    job_key,
)
from rfbench.compute.experiments.registry import (
    UnknownExperimentError,
    get_experiment,
    list_experiments,
    register_experiment,
)

__all__ = [
    "PROFILES",
    "RESERVED_KEYS",
    "ConfigError",
    "Experiment",
    "JobSpec",
    "ResolvedConfig",
    "UnknownExperimentError",
    "get_experiment",
    "job_key",
    "list_experiments",
    "register_experiment",
]
