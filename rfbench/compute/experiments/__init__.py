"""Experiments (docs/architecture.md#layout): one package per experiment, registered by name; the
names below are the plugin API (docs/extending.md#experiment), the classes re-exported from
``base``.

The experiment registry is here too: experiments by name (:func:`register_experiment`), the
built-in packages and the plugins imported on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TypeVar

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
from rfbench.compute.plugins import BuiltinsThenPlugins, claim, tracked

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

EXPERIMENTS: dict[str, type[Experiment]] = tracked({})
E = TypeVar("E", bound=type[Experiment])
PACKAGE = "rfbench.compute.experiments"


class UnknownExperimentError(ConfigError):
    """An experiment name the registry does not know."""


def register_experiment(cls: E) -> E:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    if not (isinstance(cls, type) and issubclass(cls, Experiment)) or not cls.name:
        raise TypeError(f"{cls!r} must be an Experiment subclass with a non-empty name")
    reserved = sorted(set(cls.params.model_fields) & set(RESERVED_KEYS))
    if reserved:
        raise TypeError(f"{cls.__name__}.params uses reserved key(s) {reserved}")
    claim(EXPERIMENTS, "experiment", cls.name, cls, cls)
    return cls


def load_builtins() -> None:
    """Import every experiment module of this package (registration happens on import)."""
    from rfbench.compute.plugins import import_submodules

    import_submodules(PACKAGE, skip=("base",))


#: the built-ins, then the plugins, on first use (rfbench.compute.plugins)
_load = BuiltinsThenPlugins(load_builtins)


def get_experiment(name: str) -> Experiment:
    """A fresh instance of the experiment registered as ``name``."""
    if name not in EXPERIMENTS:
        _load()
    try:
        return EXPERIMENTS[name]()
    except KeyError:
        allowed = ", ".join(sorted(EXPERIMENTS)) or "none"
        raise UnknownExperimentError(f"unknown experiment {name!r} (allowed: {allowed})") from None


def list_experiments() -> list[Experiment]:
    """One instance of every registered experiment, sorted by name."""
    _load()
    return [EXPERIMENTS[name]() for name in sorted(EXPERIMENTS)]
