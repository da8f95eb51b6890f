"""Memory is estimated before anything runs: a run whose largest job
(:meth:`~rfbench.compute.experiments.Experiment.peak_memory`) cannot fit the budget is refused with
one line naming the parameter furthest above what fits and its largest value that fits
(docs/architecture.md#cli, ``--max-memory``; limits in :mod:`rfbench.compute.memlimits`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from rfbench.compute.experiments.base import ConfigError, Experiment
from rfbench.compute.memlimits import budget, human

_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(text: str | int | None) -> int | None:
    """``'4G'``, ``'512MB'``, ``'1.5GiB'`` or a number of bytes as bytes; None stays None."""
    if text is None or isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(i?B)?\s*", str(text), re.IGNORECASE)
    if not match or float(match.group(1)) <= 0:
        raise ConfigError.bad_value("max-memory", text, "a size such as 4G, 512M or 2.5GB")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def _with(config: Mapping[str, Any], key: str, value: int) -> dict[str, Any]:
    changed = copy.deepcopy(dict(config))
    changed[key] = [value] if isinstance(config[key], list) else value
    return changed


def _current(config: Mapping[str, Any], key: str) -> int | None:
    value = config.get(key)
    values = value if isinstance(value, list) else [value]
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return max(ints) if ints else None


def largest_fitting(
    experiment: Experiment, config: Mapping[str, Any], key: str, budget: int
) -> int | None:
    """The largest value of ``key`` (others as they are) whose job fits ``budget``; None if none."""
    high = _current(config, key)
    if high is None or experiment.peak_memory(_with(config, key, 1)) > budget:
        return None
    low = 1
    while low < high - 1:
        mid = (low + high) // 2
        if experiment.peak_memory(_with(config, key, mid)) <= budget:
            low = mid
        else:
            high = mid
    return low


def check_memory(
    experiment: Experiment, config: Mapping[str, Any], workers: int, max_memory: int | None
) -> None:
    """Raise :class:`ConfigError` if the largest job of ``config`` cannot fit the budget."""
    need = experiment.peak_memory(config)
    if need <= 0:
        return
    limit = budget(workers, max_memory)
    if need <= limit.bytes:
        return
    fits = {
        key: largest_fitting(experiment, config, key, limit.bytes)
        for key in experiment.memory_parameters
        if _current(config, key) is not None
    }
    ratios = {k: _current(config, k) / v for k, v in fits.items() if v}
    head = (
        f"a job needs about {human(need)}, more than the {human(limit.bytes)} budget "
        f"({limit.source})"
    )
    if not ratios and config.get("data"):
        raise ConfigError(f"{head}: the data file {config['data']} sets its size; use fewer rows")
    if not ratios:  # no size makes it fit: the budget is what is too small
        keys = [k for k in experiment.memory_parameters if _current(config, k) is not None]
        smallest = config
        for k in keys:
            smallest = _with(smallest, k, 1)
        floor = experiment.peak_memory(smallest) if keys else need
        sizes = f"no {', '.join(map(repr, keys))} fits it; " if keys else ""
        raise ConfigError(f"{head}: {sizes}give --max-memory at least {human(floor)}")
    key = max(ratios, key=ratios.__getitem__)
    raise ConfigError(f"{head}: {key!r} = {_current(config, key)} is too large; "
                      f"at most {fits[key]} fits")  # fmt: skip
