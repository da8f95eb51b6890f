"""``run``: expand a config into jobs, run the missing ones, write one result file.

The output is a function of (experiment, resolved config, root seed) only, whatever was cached or
interrupted before (docs/architecture.md#seeding, #job-cache). The runner adds the columns
``experiment``, ``figure`` and ``features`` to every result file, so that its readers need no code
of ours (:func:`with_run_columns`, docs/architecture.md#result-schema).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.experiments.base import ConfigError, Experiment
from rfbench.compute.features import registry
from rfbench.compute.results import make_provenance, write_results
from rfbench.compute.runner.backends import (
    TIMING_ATTR,
    ProgressCallback,
    Task,
    run_dask,
    run_processes,
    run_serial,
)
from rfbench.compute.runner.digest import code_digest, plugin_info
from rfbench.compute.runner.options import RunOptions
from rfbench.compute.runner.outputs import writing
from rfbench.compute.runner.preflight import Plan, expand_grid, prepare
from rfbench.compute.runner.progress import JobProgress

__all__ = ["RunOptions", "execute_plan", "expand_grid", "run", "run_timing"]


def _backend_iter(
    backend: str,
    experiment: Experiment,
    tasks: Sequence[Task],
    seed: int,
    workers: int,
    scheduler: str | None,
    on_progress: ProgressCallback | None = None,
) -> Iterator[tuple[int, pd.DataFrame]]:
    if backend == "serial":
        return run_serial(experiment, tasks, seed, on_progress)
    if backend == "processes":
        return run_processes(experiment, tasks, seed, min(workers, len(tasks)), on_progress)
    return run_dask(experiment, tasks, seed, workers, scheduler)


def longest_first(experiment: Experiment, tasks: Sequence[Task]) -> list[Task]:
    """``tasks`` in decreasing :meth:`~rfbench.compute.experiments.Experiment.job_cost` (ties and
    any unknown cost: grid order). The pool starts jobs in this order; rows never depend on it."""
    costs = [experiment.job_cost(spec) for _, spec in tasks]
    if any(cost is None for cost in costs):
        return list(tasks)
    order = sorted(range(len(tasks)), key=lambda i: -float(costs[i]))  # type: ignore[arg-type]
    return [tasks[i] for i in order]


def run(
    experiment: Experiment | str,
    config: Mapping[str, Any] | None = None,
    options: RunOptions | None = None,
) -> Path:
    """Run every job of ``experiment`` under ``config`` and write the result file; return its path.

    Parameters
    ----------
    experiment : Experiment or str
        The experiment or its registered name.
    config : mapping or None
        Resolved with :meth:`Experiment.check_config` (missing keys take the defaults); a config
        the experiment already resolved (the CLI's, :func:`resolve_file`'s) is taken as it is.
    options : RunOptions or None
        Seed, output, backend, cache use (:class:`~rfbench.compute.runner.options.RunOptions`);
        None: the defaults.

    Returns
    -------
    Path
        The result file. Bad options raise :class:`ConfigError` before any job starts
        (:mod:`rfbench.compute.runner.preflight`); a failing job raises
        :class:`~rfbench.compute.runner.backends.JobFailed` after the jobs already finished are
        cached. An existing result is replaced only if it is of the same experiment, and (unless
        ``options.replace``) of the same profile and config name.
    """
    started = time.perf_counter(), time.process_time()
    with prepare(experiment, config, options) as plan:
        return execute_plan(plan, started)


def execute_plan(plan: Plan, started: tuple[float, float] | None = None) -> Path:
    """Run the jobs of a :class:`~rfbench.compute.runner.preflight.Plan` that are not cached and
    write its result file; return its path. ``started`` is ``(wall, cpu)`` of when the run began
    (default: now), for the provenance's timing."""
    started_wall, started_cpu = started or (time.perf_counter(), time.process_time())
    exp, config, specs, cache, out = plan.experiment, plan.config, plan.specs, plan.cache, plan.out
    opts = plan.options
    seed, workers, backend, quiet = opts.seed, int(opts.workers or 1), opts.backend, opts.quiet
    cache.remove_stale_temporaries()

    fresh = set() if opts.fresh is None else opts.fresh
    frames: list[pd.DataFrame | None] = [
        cache.load(s) if not opts.force or cache.path(s) in fresh else None for s in specs
    ]
    if cache.corrupt and not quiet:
        print(
            f"rfbench: {len(cache.corrupt)} cached job file(s) failed their checksum or could "
            f"not be read (first: {cache.corrupt[0]}); computing those jobs again",
            file=sys.stderr,
        )
    tasks = longest_first(exp, [(i, spec) for i, spec in enumerate(specs) if frames[i] is None])
    computed: set[int] = set()
    progress = JobProgress(
        len(specs),
        len(specs) - len(tasks),
        description=config["name"],
        enabled=bool(tasks) and not quiet,
    )
    if tasks:
        jobs = _backend_iter(
            backend, exp, tasks, seed, workers, opts.scheduler, progress.job_progress
        )
        with progress, contextlib.closing(jobs):
            for index, rows in jobs:
                timing = rows.attrs.pop(TIMING_ATTR, None)
                with writing(cache.path(specs[index]), opts.output_option):
                    fresh.add(cache.store(specs[index], rows, timing))
                frames[index] = cache.load(specs[index])  # the same bytes a resumed run reads
                computed.add(index)
                progress.job_done(index)

    missing = [specs[i] for i, f in enumerate(frames) if f is None]
    if missing:  # only if the cache folder changed under us
        raise RuntimeError(f"job cache {cache.directory} lost job {missing[0]!r}; run again")
    done = [f for f in frames if f is not None and len(f.columns)]
    rows = pd.concat(done, ignore_index=True) if done else pd.DataFrame()
    rows = with_run_columns(rows, exp.name, config["figure"])
    result = with_run_columns(exp.finalize(rows, config), exp.name, config["figure"])
    _check_not_all_skipped(result, exp.name)
    provenance = make_provenance(
        config=config,
        seed=seed,
        command_line=opts.command_line,
        experiment=exp.name,
        code_digest=code_digest(),
        backend=backend,
        workers=1 if backend == "serial" else workers,
        n_jobs=len(specs),
        estimators=sorted(map(str, result["estimator"].dropna().unique()))
        if "estimator" in result
        else [],
        plugins=list(plugin_info()),
    )
    provenance["timing"] = run_timing(
        [cache.timing(s) for s in specs],
        computed,
        time.perf_counter() - started_wall,
        time.process_time() - started_cpu,
        jobs_in_process=backend == "serial",
    )
    with writing(out, opts.output_option):
        return write_results(result, out, provenance)


def _rounded(x: float | None) -> float | None:
    return None if x is None else float(f"{x:.4g}")


def run_timing(
    jobs: Sequence[Mapping[str, float] | None],
    computed: set[int],
    wall_s: float,
    main_cpu_s: float,
    jobs_in_process: bool = False,
) -> dict[str, Any]:
    """The ``timing`` object of a result file's provenance (docs/architecture.md#result-schema).

    Parameters
    ----------
    jobs : sequence of {"wall_s", "cpu_s"} or None, length n_jobs
        Each job's measured time in grid order (None: a cached job stored without a time).
    computed : set of int
        Grid positions of the jobs computed by this run (the others came from the cache, with
        the time they took when they were computed).
    wall_s, main_cpu_s : float
        This run's wall time and the CPU seconds of the process that ran it.
    jobs_in_process : bool
        Whether the computed jobs ran in that process (serial backend: their CPU time is already
        in ``main_cpu_s``) rather than in worker processes.

    Returns
    -------
    dict
        ``wall_s`` (this run), ``cpu_s`` (this run: its own process plus the jobs it computed),
        ``jobs_wall_s`` / ``jobs_cpu_s`` (all jobs, as measured when computed — the cost of the
        file from scratch), ``jobs_computed`` / ``jobs_cached`` and the per-job lists
        ``job_wall_s``, ``job_cpu_s`` and ``job_cached`` (4 significant digits).
    """
    known = [j for j in jobs if j is not None]
    workers = (
        0.0
        if jobs_in_process
        else sum(j["cpu_s"] for i, j in enumerate(jobs) if j is not None and i in computed)
    )
    return {
        "wall_s": _rounded(wall_s),
        "cpu_s": _rounded(main_cpu_s + workers),
        "jobs_wall_s": _rounded(sum(j["wall_s"] for j in known)) if known else None,
        "jobs_cpu_s": _rounded(sum(j["cpu_s"] for j in known)) if known else None,
        "jobs_computed": len(computed),
        "jobs_cached": len(jobs) - len(computed),
        "job_wall_s": [None if j is None else _rounded(j["wall_s"]) for j in jobs],
        "job_cpu_s": [None if j is None else _rounded(j["cpu_s"]) for j in jobs],
        "job_cached": [i not in computed for i in range(len(jobs))],
    }


def _check_not_all_skipped(result: pd.DataFrame, experiment: str) -> None:
    """A run that computed nothing is a user error with the first row's reason (no file written)."""
    if len(result) and "metric" in result and (result["metric"] == "skipped").all():
        notes = result["note"].dropna() if "note" in result else result[:0]
        why = str(notes.iloc[0]).removeprefix("skipped: ") if len(notes) else "no reason given"
        raise ConfigError(f"every {experiment} row was skipped, nothing was computed: {why}")


#: the feature count of an estimator's row (derived from ``m`` and the estimator: not part of a
#: row's identity in ``rfbench compare``)
FEATURES = "features"


def with_run_columns(rows: pd.DataFrame, experiment: str, figure: str) -> pd.DataFrame:
    """Fill the ``experiment``, ``figure`` and ``features`` columns where the rows lack them.

    Parameters
    ----------
    rows : DataFrame, shape (n_rows, n_columns)
        Result rows of one run.
    experiment, figure : str
        The run's experiment and figure names.

    Returns
    -------
    DataFrame, the rows with the three columns (``features`` null where a row is no registry
    estimator's or has no ``m``).
    """
    if "experiment" not in rows.columns:
        rows = rows.assign(experiment=experiment)
    if "figure" not in rows.columns:
        rows = rows.assign(figure=figure)
    if FEATURES not in rows.columns and {"m", "estimator"} <= set(rows.columns):
        rows = rows.assign(**{FEATURES: feature_counts(rows)})
    return rows


def feature_counts(rows: pd.DataFrame) -> pd.Series:
    """M = m × features per projection of each row's estimator (null where unknown)."""
    widths: dict[str, float] = {}
    for name in rows["estimator"].dropna().unique():
        try:
            width = registry.describe(name).estimator.features_per_projection
        except (registry.UnknownEstimatorError, ValueError):  # "exact", baselines, bad options
            width = None
        widths[name] = np.nan if width is None else float(width)
    m = pd.to_numeric(rows["m"], errors="coerce").astype(float)
    count = m * rows["estimator"].map(widths).astype(float)
    return pd.Series(pd.array(count.round(), dtype="Int64"), index=rows.index)
