"""Backends that run jobs: ``serial`` (this process), ``processes`` (a process pool), ``dask``.

Every backend calls :func:`execute_job` with one BLAS thread, so the rows are bit-identical whatever
the backend, the workers or the order of completion (docs/architecture.md#seeding). Backends yield
``(index, rows)`` as jobs finish; the caller orders them. In-job progress
(:func:`rfbench.compute.experiments.chunks.advance`) reaches ``on_progress(index, fraction)`` from
the serial and processes backends; Dask reports whole jobs only.

Worker processes never outlive the run that started them, whatever ends it: on Linux a worker asks
the kernel to send it SIGKILL when its parent dies (``prctl`` with ``PR_SET_PDEATHSIG``), which
covers SIGKILL of the main process too; elsewhere, and as a fallback, a daemon thread polls the
parent's pid once a second and ends the worker when it changes (:func:`die_with_parent`).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent import futures
from functools import partial
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits

from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec, job_key
from rfbench.compute.experiments.chunks import reporting
from rfbench.compute.results import validate_results
from rfbench.compute.runner.digest import check_workers
from rfbench.compute.seeding import job_rng

BACKENDS: tuple[str, ...] = ("serial", "processes", "dask")
BLAS_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

Task = tuple[int, JobSpec]
#: ``on_progress(index, fraction)``: job ``index`` finished ``fraction`` more of its work
ProgressCallback = Callable[[int, float], None]
#: a worker sends a job's progress once at least this share has accumulated (≤ 100 messages)
_PROGRESS_GRAIN = 0.01


class JobFailed(RuntimeError):
    """A job raised; the message names the job, the cause is chained."""

    def __init__(self, experiment: str, spec: JobSpec, exc: BaseException) -> None:
        super().__init__(f"job {spec!r} of experiment {experiment!r} failed: {exc!r}")
        self.spec = spec
        self.experiment = experiment


def rows_frame(rows: Any, experiment: Experiment) -> pd.DataFrame:
    """The rows returned by ``run_job`` as a DataFrame with a fresh index."""
    if isinstance(rows, pd.DataFrame):
        return rows.reset_index(drop=True)
    if isinstance(rows, Sequence) and all(isinstance(r, Mapping) for r in rows):
        return pd.DataFrame([dict(r) for r in rows])
    raise TypeError(
        f"{type(experiment).__name__}.run_job must return a list of dicts or a DataFrame, "
        f"got {type(rows).__name__}"
    )


#: ``rows.attrs`` key of a job's measured time: {"wall_s": float, "cpu_s": float}, set by
#: ``execute_job`` and removed by the runner (never part of the rows or the cache key)
TIMING_ATTR = "rfbench_timing"


def execute_job(experiment: Experiment, spec: JobSpec, seed: int) -> pd.DataFrame:
    """Run one job with its own generator; check its rows if ``finalize`` keeps them as they are.

    The job's wall and CPU seconds (``time.perf_counter`` / ``time.process_time`` of the process
    running it, one BLAS thread) travel in ``rows.attrs[TIMING_ATTR]``.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    rows = rows_frame(
        experiment.run_job(spec, job_rng(seed, job_key(experiment.name, spec, experiment.unkeyed))),
        experiment,
    )
    timing = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    if type(experiment).finalize is Experiment.finalize and len(rows):
        filled = rows.assign(**{k: rows.get(k, "") for k in ("experiment", "figure")})
        validate_results(filled)  # fail early, naming the job, rather than after the whole run
    rows.attrs[TIMING_ATTR] = timing
    return rows


# ----------------------------------------------------------------------------- BLAS threads


def single_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """A context in which the BLAS of this process uses one thread."""
    return threadpool_limits(limits=1)


_pinned = False


def pin_worker(ignore_sigint: bool = True) -> None:
    """Worker initializer: one BLAS thread for the life of the process; Ctrl-C goes to the parent.

    The environment variables reach libraries loaded later and child processes; threadpoolctl
    limits the BLAS already loaded (workers forked from a parent that imported numpy).
    """
    global _pinned
    for var in BLAS_THREAD_VARS:
        os.environ[var] = "1"
    threadpool_limits(limits=1)
    if ignore_sigint:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _pinned = True


def _execute_pinned(experiment: Experiment, spec: JobSpec, seed: int) -> pd.DataFrame:
    if not _pinned:
        pin_worker(ignore_sigint=False)
    return execute_job(experiment, spec, seed)


# ----------------------------------------------------------------------------- backends


def run_serial(
    experiment: Experiment,
    tasks: Sequence[Task],
    seed: int,
    on_progress: ProgressCallback | None = None,
) -> Iterator[tuple[int, pd.DataFrame]]:
    """Run the jobs one after the other in this process."""
    with single_blas_thread():
        for index, spec in tasks:
            sink = None if on_progress is None else _grains(partial(on_progress, index))
            try:
                with reporting(sink) if sink else contextlib.nullcontext():
                    rows = execute_job(experiment, spec, seed)
            except ConfigError:
                raise
            except Exception as exc:
                raise JobFailed(experiment.name, spec, exc) from exc
            yield index, rows


def _grains(send: Callable[[float], None]) -> Callable[[float], None]:
    """A sink that passes progress on to ``send`` once at least 1 % of a job has accumulated."""
    pending = 0.0

    def sink(fraction: float) -> None:
        nonlocal pending
        pending += fraction
        if pending >= _PROGRESS_GRAIN:
            send(pending)
            pending = 0.0

    return sink


_queue: Any = None  # a worker's progress queue (set by its initializer)


def _init_worker(progress_queue: Any, parent: int) -> None:
    global _queue
    _queue = progress_queue
    die_with_parent(parent)
    pin_worker()


def _execute_reporting(
    experiment: Experiment, spec: JobSpec, seed: int, index: int
) -> pd.DataFrame:
    """``execute_job`` in a worker, its progress sent as (index, share) in grains of 1 %."""
    if _queue is None:
        return execute_job(experiment, spec, seed)
    with reporting(_grains(lambda share: _queue.put((index, share)))):
        return execute_job(experiment, spec, seed)


def _drain(progress_queue: Any, on_progress: ProgressCallback | None) -> None:
    while True:
        try:
            index, fraction = progress_queue.get_nowait()
        except queue.Empty:
            return
        if on_progress is not None:
            on_progress(index, fraction)


def _abort_pool(pool: futures.ProcessPoolExecutor) -> None:
    """Cancel pending jobs and stop the workers now (used on Ctrl-C)."""
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            proc.terminate()


def _completed(
    pending: Mapping[futures.Future, Task],
    progress_queue: Any,
    on_progress: ProgressCallback | None,
) -> Iterator[futures.Future]:
    """Like ``futures.as_completed``, relaying the workers' progress every 0.2 s meanwhile."""
    waiting = set(pending)
    while waiting:
        done, waiting = futures.wait(waiting, timeout=0.2, return_when=futures.FIRST_COMPLETED)
        _drain(progress_queue, on_progress)
        yield from done


def run_processes(
    experiment: Experiment,
    tasks: Sequence[Task],
    seed: int,
    workers: int,
    on_progress: ProgressCallback | None = None,
) -> Iterator[tuple[int, pd.DataFrame]]:
    """Run the jobs on a pool of ``workers`` processes with one BLAS thread each.

    On a failing job, pending jobs are cancelled, running ones finish (and are yielded, so they are
    cached), then :class:`JobFailed` is raised. On Ctrl-C the workers are stopped at once.
    """
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    context = multiprocessing.get_context(method)
    progress_queue = context.Queue()
    pool = futures.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(progress_queue, os.getpid()),
    )
    failure: tuple[JobSpec, BaseException] | None = None
    try:
        pending = {
            pool.submit(_execute_reporting, experiment, spec, seed, i): (i, spec)
            for i, spec in tasks
        }
        for fut in _completed(pending, progress_queue, on_progress):
            if fut.cancelled():
                continue
            index, spec = pending[fut]
            exc = fut.exception()
            if exc is None:
                yield index, fut.result()
            elif failure is None:
                failure = (spec, exc)
                for other in pending:
                    other.cancel()
    except BaseException:
        _abort_pool(pool)
        raise
    pool.shutdown(wait=True)
    progress_queue.close()
    if failure is not None:
        spec, exc = failure
        if isinstance(exc, ConfigError):
            raise exc
        raise JobFailed(experiment.name, spec, exc) from exc


#: seconds to wait for a Dask scheduler before calling it unreachable
SCHEDULER_TIMEOUT = 5


def run_dask(
    experiment: Experiment,
    tasks: Sequence[Task],
    seed: int,
    workers: int,
    scheduler: str | None,
) -> Iterator[tuple[int, pd.DataFrame]]:
    """Run the jobs on Dask: the cluster at ``scheduler``, else a local one of ``workers``."""
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise ConfigError(
            "backend 'dask' needs the optional dependency dask[distributed]: "
            "pip install 'rfbench[dask]' (or use --backend processes)"
        ) from None
    if scheduler:
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except ValueError as exc:  # distributed's parser: no port, unknown protocol, ...
            raise ConfigError(
                f"invalid value for '--scheduler': {scheduler!r} ({exc}; "
                "allowed: an address such as tcp://127.0.0.1:8786)"
            ) from None
        except (OSError, TimeoutError) as exc:
            raise ConfigError(
                f"cannot reach the Dask scheduler at {scheduler} within {SCHEDULER_TIMEOUT} s "
                f"({type(exc).__name__}); is it running?"
            ) from None
    else:
        client = Client(n_workers=workers, threads_per_worker=1, processes=True)
    with client:
        check_workers(client)
        pending = {
            client.submit(_execute_pinned, experiment, spec, seed, pure=False): (i, spec)
            for i, spec in tasks
        }
        try:
            for fut in as_completed(pending):
                index, spec = pending[fut]
                try:
                    rows = fut.result()
                except ConfigError:
                    raise
                except Exception as exc:
                    raise JobFailed(experiment.name, spec, exc) from exc
                yield index, rows
        finally:
            client.cancel(list(pending))


PR_SET_PDEATHSIG = 1
POLL_SECONDS = 1.0


def _set_parent_death_signal() -> bool:
    """Ask Linux to SIGKILL this process when its parent exits; whether it was set."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    return False


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(POLL_SECONDS)


def die_with_parent(parent: int) -> None:
    """Make this (worker) process end as soon as ``parent`` (the pid that started it) is gone."""
    _set_parent_death_signal()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
