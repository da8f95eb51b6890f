"""The job cache: each finished job's rows in ``<out dir>/.cache/jobs/<tag>/<hash>.parquet``.

Every output file of a folder shares one cache: the key below determines a job's rows, so two
configs with the same jobs (HRF Fig. 6 and Table 3 share their paper-protocol jobs) compute
them once.

A job's cache key holds everything its rows depend on: the digest of the rfbench source and the
numpy and scipy versions (:mod:`rfbench.runner.digest`; ``<tag>`` names them), the experiment's
name, the root seed, the job spec and the experiment's ``cache_context(config)`` (by default the
whole resolved config). So an edit of the code never serves the rows of the old code. Files are
written atomically and carry their key in the parquet metadata, which is checked on load, so a
stale or foreign file is never reused. ``force=True`` recomputes every job anyway.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from rfbench.experiments import Experiment, JobSpec
from rfbench.results import write_table
from rfbench.runner.digest import code_tag, environment, external_sources
from rfbench.seeding import canonical_json

CACHE_DIRNAME = ".cache"
JOB_METADATA_KEY = b"rfbench_job"


SHARED = "jobs"


def cache_dir(out: Path) -> Path:
    """The cache folder of an output file, shared by its folder (one subfolder per code tag)."""
    return out.parent / CACHE_DIRNAME / SHARED


class JobCache:
    """Finished jobs of one (experiment, config, seed) under the current code, one file per job."""

    def __init__(
        self, directory: Path, experiment: Experiment, seed: int, config: Mapping[str, Any]
    ) -> None:
        self.directory = directory / code_tag()
        context = canonical_json(experiment.cache_context(config))
        self._base = {
            **environment(),
            "experiment": experiment.name,
            "seed": seed,
            "context_sha256": hashlib.sha256(context.encode()).hexdigest(),
        }
        source = external_sources(type(experiment))
        if source is not None:
            self._base["experiment_source"] = source

    def key(self, spec: JobSpec) -> str:
        """The canonical JSON key of a job."""
        return canonical_json({**self._base, "job": json.loads(spec.to_json())})

    def path(self, spec: JobSpec) -> Path:
        """Where the rows of a job are cached."""
        digest = hashlib.sha256(self.key(spec).encode()).hexdigest()[:32]
        return self.directory / f"{digest}.parquet"

    def load(self, spec: JobSpec) -> pd.DataFrame | None:
        """The cached rows of a job, or None if absent, unreadable or for another key."""
        path = self.path(spec)
        if not path.is_file():
            return None
        try:
            table = pq.read_table(path)
        except (OSError, ValueError):
            return None
        stored = (table.schema.metadata or {}).get(JOB_METADATA_KEY)
        if stored is None or stored.decode() != self.key(spec):
            return None
        return table.to_pandas()

    def store(self, spec: JobSpec, rows: pd.DataFrame) -> Path:
        """Cache the rows of a finished job (atomically)."""
        return write_table(rows, self.path(spec), {JOB_METADATA_KEY: self.key(spec).encode()})


# ----------------------------------------------------------------------------- rfbench cache


@dataclass(frozen=True)
class CacheUsage:
    """The job caches of one output folder (``<folder>/.cache``)."""

    folder: Path
    caches: int  # output files with a cache folder
    files: int  # job files
    size: int  # bytes of every file under .cache
    current: int  # job files of the current code (the others can never be read again)

    @property
    def stale(self) -> int:
        return self.files - self.current


def find_caches(root: Path) -> list[Path]:
    """Every ``.cache`` folder under ``root`` (``root/.cache`` included), sorted."""
    return sorted(p for p in Path(root).rglob(CACHE_DIRNAME) if p.is_dir())


def cache_usage(cache_root: Path) -> CacheUsage:
    """Count the job files of a ``.cache`` folder: current (this code's tag) or stale."""
    tag = code_tag()
    files = current = size = 0
    for path in cache_root.rglob("*"):
        if path.is_file():
            size += path.stat().st_size
            if path.suffix == ".parquet":
                files += 1
                current += path.parent.name == tag and path.parent.parent.parent == cache_root
    caches = sum(1 for p in cache_root.iterdir() if p.is_dir())
    return CacheUsage(cache_root.parent, caches, files, size, current)


def clear_cache(cache_root: Path, stale_only: bool = False) -> None:
    """Remove a ``.cache`` folder, or (``stale_only``) all but the current code's job files."""
    if not stale_only:
        shutil.rmtree(cache_root)
        return
    tag = code_tag()
    for stem in list(cache_root.iterdir()):
        for entry in stem.iterdir() if stem.is_dir() else [stem]:
            if entry.is_dir() and entry.name != tag:
                shutil.rmtree(entry)
            elif not entry.is_dir():
                entry.unlink()
        if stem.is_dir() and not any(stem.iterdir()):
            stem.rmdir()
    if not any(cache_root.iterdir()):
        cache_root.rmdir()
