"""Experiments (docs/architecture.md#layout): one package per experiment, registered by name; the
names below are the plugin API (docs/extending.md#experiment), re-exported from ``base`` and
``registry``.
"""

from rfbench.compute.experiments.base import (
    PROFILES,
    RESERVED_KEYS,
    ConfigError,
    DataFile,
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
    "DataFile",
    "Experiment",
    "JobSpec",
    "ResolvedConfig",
    "UnknownExperimentError",
    "get_experiment",
    "job_key",
    "list_experiments",
    "register_experiment",
]
