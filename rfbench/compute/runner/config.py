"""Config files: one TOML file per paper figure or table; their shape and resolution order are
in docs/architecture.md#configs. Every error names the file, the key and what is allowed.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rfbench.compute.experiments import get_experiment
from rfbench.compute.experiments.base import PROFILES, RESERVED_KEYS, ConfigError, Experiment
from rfbench.compute.experiments.params import config_error, renamed

TOP_LEVEL_KEYS: tuple[str, ...] = (
    "experiment",
    "name",
    "figure",
    "description",
    "params",
    "profiles",
)


@dataclass(frozen=True)
class ConfigFile:
    """The parsed (not yet resolved) content of a config file."""

    path: Path
    experiment: str
    name: str
    figure: str = ""
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)

    def params_for(self, profile: str | None) -> dict[str, Any]:
        """``[params]`` with the file's ``[profiles.<profile>]`` overrides applied."""
        return {**self.params, **(self.profiles.get(profile, {}) if profile else {})}


def _string(path: Path, data: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if value is None:
        raise ConfigError(f"{path}: missing required key {key!r} (a string)")
    if not isinstance(value, str) or (key != "figure" and key != "description" and not value):
        raise ConfigError(f"{path}: key {key!r} must be a non-empty string, got {value!r}")
    return value


def _table(path: Path, value: Any, where: str, params: bool = True) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: [{where}] must be a table of key = value, got {value!r}")
    reserved = sorted(set(value) & set(RESERVED_KEYS)) if params else []
    if reserved:
        raise ConfigError(f"{path}: key {reserved[0]!r} belongs at the top level, not in [{where}]")
    return dict(value)


#: the deepest nesting of arrays and tables a config may hold (a parameter is at most a list of
#: lists under [params] or [profiles.<name>])
MAX_NESTING = 16


def _nesting(value: Any) -> int:
    """How deeply arrays and tables nest in a parsed TOML value (iterative: any depth)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, dict | list):
            stack.extend((child, depth + 1) for child in children)
    return deepest


def read_config_file(path: str | os.PathLike[str]) -> ConfigFile:
    """Parse and shape-check a config file (no experiment defaults applied)."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path} is a directory, not a TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(
            f"{path}: arrays or tables nested too deeply to parse (at most {MAX_NESTING} levels)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc}") from None
    if _nesting(data) > MAX_NESTING:
        raise ConfigError(f"{path}: arrays or tables nested deeper than {MAX_NESTING} levels")
    unknown = sorted(set(data) - set(TOP_LEVEL_KEYS))
    if unknown:
        raise ConfigError(
            f"{path}: unknown top-level key(s) {', '.join(map(repr, unknown))} "
            f"(allowed: {', '.join(TOP_LEVEL_KEYS)}; parameters go under [params])"
        )
    profiles = _table(path, data.get("profiles", {}), "profiles", params=False)
    for profile, overrides in profiles.items():
        if profile not in PROFILES:
            raise ConfigError(
                f"{path}: unknown profile [profiles.{profile}] (allowed: {', '.join(PROFILES)})"
            )
        profiles[profile] = _table(path, overrides, f"profiles.{profile}")
    return ConfigFile(
        path=path,
        experiment=_string(path, data, "experiment"),
        name=_string(path, data, "name", path.stem),
        figure=_string(path, data, "figure", ""),
        description=_string(path, data, "description", ""),
        params=_table(path, data.get("params", {}), "params"),
        profiles=profiles,
    )


def resolve_file(
    path: str | os.PathLike[str],
    profile: str | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Experiment, dict[str, Any]]:
    """The experiment of a config file and its resolved config (``overrides`` win over the file)."""
    cfg = read_config_file(path)
    if profile is not None and profile not in PROFILES:
        raise ConfigError(
            f"invalid value for 'profile': {profile!r} (allowed: {', '.join(PROFILES)})"
        )
    try:
        experiment = get_experiment(cfg.experiment)
        layers = (cfg.params, cfg.profiles.get(profile, {}) if profile else {}, overrides or {})
        # old parameter names are renamed layer by layer, so a later layer's old name still wins
        params: dict[str, Any] = {}
        for layer in layers:
            params.update(renamed(experiment.params, layer, cfg.experiment))
        config = experiment.resolve_config(params, profile, name=cfg.name, figure=cfg.figure)
    except ConfigError as exc:
        raise type(exc)(f"{cfg.path}: {exc}") from None
    _check_other_profiles(cfg, experiment, profile)
    return experiment, config


def _check_other_profiles(cfg: ConfigFile, experiment: Experiment, profile: str | None) -> None:
    """The keys and types of the file's other profiles: a typo in [profiles.paper] is found by a
    quick run too (and by ``reproduce``'s check of every config), not in the first paper run. A
    combination of values (``m`` and ``budget`` both given) is the experiment's to judge when that
    profile runs (its profile values may replace a key), so only a key or a value is refused."""
    notices = logging.getLogger("rfbench.params")  # an old name's notice: once, for the run's
    for other, overrides in cfg.profiles.items():
        if other == profile:
            continue
        disabled, notices.disabled = notices.disabled, True
        try:
            params: dict[str, Any] = {}
            for layer in (cfg.params, overrides):
                params.update(renamed(experiment.params, layer, cfg.experiment))
            experiment.params.model_validate(params)
        except ValidationError as exc:
            if any(error["loc"] for error in exc.errors()):  # a key or a value, not a combination
                error = config_error(exc, experiment.params, cfg.experiment)
                raise ConfigError(f"{cfg.path}: [profiles.{other}]: {error}") from None
        except ConfigError as exc:
            raise type(exc)(f"{cfg.path}: [profiles.{other}]: {exc}") from None
        finally:
            notices.disabled = disabled


def load_config(
    path: str | os.PathLike[str],
    profile: str | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The resolved config of a file: ``{"experiment", "name", "figure", "profile", **params}``."""
    return resolve_file(path, profile, overrides)[1]
