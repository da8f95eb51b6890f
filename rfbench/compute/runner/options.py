"""The options of one run (:func:`rfbench.compute.runner.run`), declared once."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rfbench.compute.experiments.base import ConfigError
from rfbench.compute.runner.backends import BACKENDS


@dataclass(frozen=True)
class RunOptions:
    """How to run an experiment; none of them changes a result row.

    Parameters
    ----------
    seed : int, default 0
        Root seed; every job is seeded from it and its key (docs/architecture.md#seeding).
    out : path or None, default None
        The result file; None: ``runs/<experiment>/<config name>.parquet``. Finished jobs are
        cached under ``<out dir>/.rfbench-cache/jobs/``, shared by the folder.
    workers : int or None, default None
        Worker processes; None: the number of cores.
    backend : {"processes", "serial", "dask"}, default "processes"
        Where the jobs run.
    force : bool, default False
        Compute every job again instead of reusing the cache (a job already in ``fresh`` is
        reused: "nothing from before", not "everything twice"), and let the experiment drop what
        it caches outside the job cache.
    quiet : bool, default False
        No progress bar and no warning on stderr.
    command_line : str or sequence of str or None, default None
        The command that started the run, for the result's provenance.
    scheduler : str or None, default None
        Address of a dask scheduler (``backend="dask"`` only).
    max_memory : int or None, default None
        Bytes the workers may share; a run whose largest job cannot fit is refused before any job
        starts (:mod:`rfbench.compute.runner.memory`). None: half the available memory.
    replace : bool, default False
        Replace an existing result of the same experiment but another profile or config name.
    fresh : set of Path or None, default None
        Collects the cache files of the jobs this run computes, so that runs sharing jobs
        (``rfbench reproduce``) compute each once even with ``force``.
    output_option : str, default "--out"
        The command's option that chooses the output (``reproduce``: ``--out-dir``), named in
        the messages.
    """

    seed: int = 0
    out: str | os.PathLike[str] | None = None
    workers: int | None = None
    backend: str = "processes"
    force: bool = False
    quiet: bool = False
    command_line: str | Sequence[str] | None = None
    scheduler: str | None = None
    max_memory: int | None = None
    replace: bool = False
    fresh: set[Path] | None = field(default=None, compare=False)
    output_option: str = "--out"

    def checked(self) -> RunOptions:
        """These options with ``workers`` resolved; raise :class:`ConfigError` on a bad one."""
        seed, workers, backend = self.seed, self.workers, self.backend
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError.bad_value("seed", seed, "a non-negative integer")
        if backend not in BACKENDS:
            raise ConfigError.bad_value("backend", backend, ", ".join(BACKENDS))
        if workers is None:
            workers = os.cpu_count() or 1
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError.bad_value("workers", workers, "a positive integer")
        if self.scheduler and backend != "dask":
            raise ConfigError(
                f"a scheduler address applies only to --backend dask, not {backend!r}"
            )
        return dataclasses.replace(self, workers=workers)
