"""Every check that can refuse a run, in one pass before its first job, in the order of
docs/architecture.md#preflight so that the first refusal names the real problem.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rfbench.compute.experiments import get_experiment
from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.runner import locks
from rfbench.compute.runner.cache import CACHE_DIRNAME, JobCache, cache_dir, hold
from rfbench.compute.runner.memory import check_memory
from rfbench.compute.runner.options import RunOptions
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
    #: checked, with ``workers`` resolved
    options: RunOptions
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


def check_data(specs: list[JobSpec]) -> None:
    """Make sure every registered data set the jobs read is here: a missing one is fetched now,
    and offline its :class:`~rfbench.compute.datasets.errors.DataUnavailable` stops the run before
    any job (not after the others ran)."""
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
    path = out.with_name(f".{out.name}.lock")  # hidden, beside the output
    try:
        stack.enter_context(locks.held(path, exclusive=True, wait=False))
    except locks.Busy as busy:
        who = f" (pid {busy.holder})" if busy.holder else ""
        raise ConfigError(
            f"output {out} is being written by another rfbench run{who}; wait for it to end, "
            f"or choose another {option}"
        ) from None
    except locks.LinkRefused as exc:
        raise ConfigError(f"cannot write output {out}: {exc}") from None
    except OSError as exc:
        raise ConfigError(
            f"cannot write output {out}: {exc.strerror or exc} in {out.parent} "
            f"(choose another {option})"
        ) from None


def prepare(
    experiment: Experiment | str,
    config: Mapping[str, Any] | None = None,
    options: RunOptions | None = None,
) -> Plan:
    """Check everything that can refuse a run of ``experiment`` (see the module docstring) and
    return its :class:`Plan`, holding the output's and the cache's locks; raise
    :class:`ConfigError` (a user error, one line) naming the first problem."""
    exp = get_experiment(experiment) if isinstance(experiment, str) else experiment
    config = exp.check_config(config or {})
    options = options or RunOptions()
    out = Path(options.out) if options.out is not None else default_out(exp.name, config["name"])
    options = options.checked()
    option = options.output_option
    check_output_path(out, option)
    workers = 1 if options.backend == "serial" else options.workers
    check_memory(exp, config, workers, options.max_memory)  # type: ignore[arg-type]
    exp.begin_run(options.force)
    specs = expand_grid(exp, config)
    check_data(specs)
    check_ranges(exp, specs)
    # again under the output's lock below; first before the lock and the cache folder are made,
    # so that a refused output (a user's file) leaves nothing beside it
    check_replaceable(out, exp.name, config, options.replace, option)
    cache = JobCache(cache_dir(out), exp, options.seed, config)
    plan = Plan(exp, config, out, specs, cache, options)
    try:
        _lock_output(plan.locks, out, option)
        plan.locks.enter_context(hold(out.parent / CACHE_DIRNAME))
        cache.check_paths(specs)
        plan.replaced = check_replaceable(out, exp.name, config, options.replace, option)
    except BaseException:
        plan.close()
        raise
    return plan
