"""Every check that can refuse a run, in one pass before its first job (docs/architecture.md#cli).

:func:`prepare` checks, in this order, so that the first refusal names the real problem: the
run options and the output's name; the memory budget (:mod:`rfbench.compute.runner.memory`); the
grid and the data its jobs read (present, else fetched now: offline, the data error); the float64
range of the values (:mod:`rfbench.compute.runner.ranges`); then it takes the output's lock (the
folder must be writable; a second run into the same output is refused) and the job cache's shared
lock (the cache folder and job paths must not be links, files or folders rfbench did not make), and
last refuses to replace a result of another profile or config
(:mod:`rfbench.compute.runner.outputs`). ``rfbench reproduce`` prepares every config before it runs
the first.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.experiments.registry import get_experiment
from rfbench.compute.runner import locks
from rfbench.compute.runner.backends import BACKENDS
from rfbench.compute.runner.cache import CACHE_DIRNAME, JobCache, cache_dir, hold
from rfbench.compute.runner.memory import check_memory
from rfbench.compute.runner.outputs import check_output_path, check_replaceable, default_out
from rfbench.compute.runner.ranges import check_ranges


@dataclass
class Plan:
    """A run that passed every check, holding its locks until :meth:`close`."""

    experiment: Experiment
    config: Mapping[str, Any]
    out: Path
    specs: list[JobSpec]
    cache: JobCache
    seed: int
    workers: int
    backend: str
    scheduler: str | None
    #: the command's option that chooses the output (``--out``; ``reproduce``: ``--out-dir``)
    option: str = "--out"
    #: the config of a file of another profile or config this run replaces (``--replace``)
    replaced: Mapping[str, Any] | None = None
    locks: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def close(self) -> None:
        """Release the locks."""
        self.locks.close()

    def __enter__(self) -> Plan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_options(seed: Any, workers: Any, backend: str, scheduler: str | None) -> int:
    """Check the run options; return the number of workers."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError.bad_value("seed", seed, "a non-negative integer")
    if backend not in BACKENDS:
        raise ConfigError.bad_value("backend", backend, ", ".join(BACKENDS))
    if workers is None:
        workers = os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError.bad_value("workers", workers, "a positive integer")
    if scheduler and backend != "dask":
        raise ConfigError(f"a scheduler address applies only to --backend dask, not {backend!r}")
    return workers


def check_data(specs: list[JobSpec]) -> None:
    """Make sure every registered data set the jobs read is here: a missing one is fetched now,
    and offline its :class:`~rfbench.compute.datasets.errors.DataUnavailable` stops the run before
    any
    job (not after the others ran)."""
    from rfbench.compute import datasets
    from rfbench.compute.datasets.errors import DataError

    names = {s.get("dataset") for s in specs if isinstance(s.get("dataset"), str)}
    for name in sorted(names):
        try:
            if datasets.available(name):
                continue
        except DataError:
            continue  # not a registered data set (a label, a user's file): nothing to fetch
        datasets.load(name)


def expand_grid(experiment: Experiment, config: Mapping[str, Any]) -> list[JobSpec]:
    """The experiment's jobs, checked: a non-empty list of distinct specs."""
    specs = [s if isinstance(s, JobSpec) else JobSpec(s) for s in experiment.grid(config)]
    if not specs:
        raise ConfigError(f"experiment {experiment.name!r}: this config has no jobs")
    seen: dict[JobSpec, int] = {}
    for i, spec in enumerate(specs):
        if spec in seen:
            raise ValueError(
                f"{type(experiment).__name__}.grid repeats job {spec!r} (positions {seen[spec]}, "
                f"{i}): equal keys would draw the same random numbers"
            )
        seen[spec] = i
    return specs


def _lock_output(stack: contextlib.ExitStack, out: Path, option: str) -> None:
    path = locks.output_lock_path(out)
    try:
        stack.enter_context(locks.held(path, exclusive=True, wait=False))
    except locks.Busy as busy:
        who = f" (pid {busy.holder})" if busy.holder else ""
        raise ConfigError(
            f"output {out} is being written by another rfbench run{who}; wait for it to end, "
            f"or choose another {option}"
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot write output {out}: {exc.strerror or exc} in {out.parent} "
            f"(choose another {option})"
        ) from None


def prepare(
    experiment: Experiment | str,
    config: Mapping[str, Any] | None = None,
    seed: int = 0,
    out: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    backend: str = "processes",
    scheduler: str | None = None,
    max_memory: int | None = None,
    replace: bool = False,
    option: str = "--out",
    force: bool = False,
) -> Plan:
    """Check everything that can refuse a run of ``experiment`` (see the module docstring) and
    return its :class:`Plan`, holding the output's and the cache's locks; raise
    :class:`ConfigError` (a user error, one line) naming the first problem.

    ``option`` names the command's option that chooses the output (``--out``, or ``reproduce``'s
    ``--out-dir``), for the messages. ``force`` lets the experiment drop what it caches outside
    the job cache (:meth:`~rfbench.compute.experiments.base.Experiment.begin_run`) before its grid
    is made.
    """

    exp = get_experiment(experiment) if isinstance(experiment, str) else experiment
    config = exp.check_config(config or {})
    out = Path(out) if out is not None else default_out(exp.name, config["name"])
    workers = check_options(seed, workers, backend, scheduler)
    check_output_path(out, option)
    check_memory(exp, config, 1 if backend == "serial" else workers, max_memory)
    exp.begin_run(force)
    specs = expand_grid(exp, config)
    check_data(specs)
    check_ranges(exp, config, specs)
    cache = JobCache(cache_dir(out), exp, seed, config)
    plan = Plan(exp, config, out, specs, cache, seed, workers, backend, scheduler, option)
    try:
        _lock_output(plan.locks, out, option)
        plan.locks.enter_context(hold(out.parent / CACHE_DIRNAME))
        cache.check_paths(specs)
        plan.replaced = check_replaceable(out, exp.name, config, replace, option)
    except BaseException:
        plan.close()
        raise
    return plan
