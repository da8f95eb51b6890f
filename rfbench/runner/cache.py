"""The job cache: each finished job's rows in ``<out dir>/.cache/<out stem>/<job hash>.parquet``.

A job's cache key holds everything its rows depend on: the experiment's name and ``version``, the
rfbench version, the root seed, the job spec and the experiment's ``cache_context(config)`` (by
default the whole resolved config). Files are written atomically and carry their key in the parquet
metadata, which is checked on load, so a stale or foreign file is never reused. After a code change
that alters results without a version bump, run with ``force=True``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

import rfbench
from rfbench.experiments import Experiment, JobSpec
from rfbench.results import write_table
from rfbench.seeding import canonical_json

CACHE_DIRNAME = ".cache"
JOB_METADATA_KEY = b"rfbench_job"


def cache_dir(out: Path) -> Path:
    """The cache folder of an output file."""
    return out.parent / CACHE_DIRNAME / out.stem


class JobCache:
    """Finished jobs of one (experiment, config, seed), stored one parquet file per job."""

    def __init__(
        self, directory: Path, experiment: Experiment, seed: int, config: Mapping[str, Any]
    ) -> None:
        self.directory = directory
        context = canonical_json(experiment.cache_context(config))
        self._base = {
            "experiment": experiment.name,
            "version": experiment.version,
            "rfbench": rfbench.__version__,
            "seed": seed,
            "context_sha256": hashlib.sha256(context.encode()).hexdigest(),
        }

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
