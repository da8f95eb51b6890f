"""Memory is estimated before anything runs: a run whose largest job cannot fit is refused.

Each experiment estimates the peak bytes of its largest job from its parameters
(:meth:`rfbench.experiments.Experiment.peak_memory`; 0 where it has no estimate). The budget is
``--max-memory`` or, by default, :data:`DEFAULT_FRACTION` of the memory available now divided by
the number of worker processes. A run over budget stops at once with one line naming the parameter
whose value is furthest above what fits, and the largest value of it that fits.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from typing import Any

from rfbench.experiments import ConfigError, Experiment

DEFAULT_FRACTION = 0.5
_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def available_memory() -> int:
    """Bytes of memory available now (Linux: MemAvailable), else the physical memory."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError, AttributeError):
        return 8 * 2**30


def parse_size(text: str | int | None) -> int | None:
    """``'4G'``, ``'512MB'``, ``'1.5GiB'`` or a number of bytes as bytes; None stays None."""
    if text is None or isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(i?B)?\s*", str(text), re.IGNORECASE)
    if not match or float(match.group(1)) <= 0:
        raise ConfigError.bad_value("max-memory", text, "a size such as 4G, 512M or 2.5GB")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def human(n: float) -> str:
    """Bytes for people: 1.5 GiB, 300 MiB."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


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
    jobs_at_once = max(1, workers)
    budget = max_memory or int(DEFAULT_FRACTION * available_memory() / jobs_at_once)
    if need <= budget:
        return
    fits = {
        key: largest_fitting(experiment, config, key, budget)
        for key in experiment.memory_parameters
        if _current(config, key) is not None
    }
    ratios = {k: _current(config, k) / v for k, v in fits.items() if v}
    source = (
        "--max-memory" if max_memory else f"half the available memory / {jobs_at_once} worker(s)"
    )
    head = f"a job needs about {human(need)}, more than the {human(budget)} budget ({source})"
    if not ratios:
        raise ConfigError(f"{head}; reduce the problem size")
    key = max(ratios, key=ratios.__getitem__)
    raise ConfigError(f"{head}: {key!r} = {_current(config, key)} is too large; "
                      f"at most {fits[key]} fits")  # fmt: skip
