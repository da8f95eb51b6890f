"""The job cache: a finished job's rows in ``<out dir>/.rfbench-cache/jobs/<tag>/<hash>.parquet``,
keyed on everything they depend on and checksummed; the folder is marked, and shared-locked by the
runs that use it (docs/architecture.md#job-cache: the key, the marker, the locks, and why a
checksum catches damage, not intent).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.results import atomic_write, write_table
from rfbench.compute.runner import locks
from rfbench.compute.runner.digest import code_tag, environment, external_sources
from rfbench.compute.seeding import canonical_json

CACHE_DIRNAME = ".rfbench-cache"
MARKER = "RFBENCH_CACHE.json"
#: the lock file: runs hold it shared, ``cache clear`` exclusively
LOCK = "RFBENCH_CACHE.lock"
FORMAT_VERSION = 2
JOB_METADATA_KEY = b"rfbench_job"
ROWS_DIGEST_KEY = b"rfbench_rows_sha256"
#: the measured time of the job when it was computed (JSON; not part of the key or the digest)
TIMING_KEY = b"rfbench_timing"
SHARED = "jobs"
#: a temporary file of an interrupted write older than this is removed by the next run
STALE_TMP_SECONDS = 600.0

_TAG = re.compile(r"^[0-9a-f]{16}$")
_JOB_FILE = re.compile(r"^[0-9a-f]{32}\.parquet$")
_TMP_FILE = re.compile(r"^\.[0-9a-f]{32}\.parquet\.\d+\.[0-9a-f]{12}\.tmp$")


def cache_dir(out: Path) -> Path:
    """The job folder of an output file's cache, shared by its folder (one subfolder per tag)."""
    return out.parent / CACHE_DIRNAME / SHARED


def is_rfbench_cache(folder: Path) -> bool:
    """Whether ``folder`` is a job cache rfbench made (its name and a readable marker)."""
    marker = folder / MARKER
    if folder.name != CACHE_DIRNAME or not marker.is_file():
        return False
    try:
        return json.loads(marker.read_text()).get("tool") == "rfbench"
    except (OSError, ValueError, AttributeError):
        return False


def _ensure_marker(cache_root: Path) -> None:
    cache_root.mkdir(parents=True, exist_ok=True)
    if not (cache_root / MARKER).is_file():
        blob = json.dumps({"tool": "rfbench", "format": FORMAT_VERSION}, sort_keys=True)
        atomic_write(cache_root / MARKER, lambda tmp: tmp.write_text(blob + "\n"))


def _not_ours(path: Path, what: str) -> ConfigError:
    return ConfigError(
        f"{path} is {what}, not rfbench's; rfbench leaves it alone and does not write through "
        "it: move it away, or write the results to another folder"
    )


def _kind(path: Path) -> str:
    """What a path that is not a regular file is, for a message ("a folder", "a FIFO", ...)."""
    mode = path.lstat().st_mode
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device")):  # fmt: skip
        if test(mode):
            return name
    return "not a regular file"


def check_folder(cache_root: Path) -> None:
    """Refuse a job cache folder rfbench must not write into: a file or a symbolic link where
    ``.rfbench-cache`` or its ``jobs/<tag>`` folders belong (raises :class:`ConfigError`)."""
    for folder in (cache_root, cache_root / SHARED, cache_root / SHARED / code_tag()):
        if folder.is_symlink():
            raise _not_ours(folder, "a symbolic link")
        if folder.exists() and not folder.is_dir():
            raise _not_ours(folder, "a file where rfbench keeps its job cache folder")


@contextlib.contextmanager
def hold(cache_root: Path) -> Iterator[None]:
    """Hold the shared lock of a job cache folder (made, with its marker, if absent): while it is
    held, ``rfbench cache clear`` leaves the folder alone."""
    check_folder(cache_root)
    try:
        fd = locks.acquire(cache_root / LOCK, exclusive=False, wait=True)
    except locks.LinkRefused as exc:
        raise ConfigError(str(exc)) from None
    try:
        _ensure_marker(cache_root)
        yield
    finally:
        locks.release(fd, cache_root / LOCK, remove=False)


class CacheInUse(Exception):
    """``cache clear`` found a job cache a live run holds."""


def rows_digest(rows: pd.DataFrame) -> str:
    """SHA-256 of a job's rows: column names, dtypes and every value."""
    sha = hashlib.sha256()
    sha.update(json.dumps([[str(c), str(t)] for c, t in rows.dtypes.items()]).encode())
    if len(rows.columns):
        sha.update(pd.util.hash_pandas_object(rows, index=False).to_numpy().tobytes())
    sha.update(str(len(rows)).encode())
    return sha.hexdigest()


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
        #: jobs whose cached file was unreadable or did not match its checksum (recomputed)
        self.corrupt: list[Path] = []
        #: the stored timing ({"wall_s", "cpu_s"}) of every job loaded, by cache file
        self.timings: dict[Path, dict[str, float]] = {}

    def key(self, spec: JobSpec) -> str:
        """The canonical JSON key of a job."""
        return canonical_json({**self._base, "job": json.loads(spec.to_json())})

    def path(self, spec: JobSpec) -> Path:
        """Where the rows of a job are cached."""
        digest = hashlib.sha256(self.key(spec).encode()).hexdigest()[:32]
        return self.directory / f"{digest}.parquet"

    def check_paths(self, specs: Sequence[JobSpec]) -> None:
        """Refuse (:class:`ConfigError`) when something other than a file rfbench can replace
        sits where a job's file belongs (a folder, a symbolic link)."""
        for spec in specs:
            path = self.path(spec)
            if path.is_symlink():
                raise _not_ours(path, "a symbolic link where a job file belongs")
            if path.exists() and not path.is_file():
                raise _not_ours(path, f"{_kind(path)} where a job file belongs")

    def load(self, spec: JobSpec) -> pd.DataFrame | None:
        """The cached rows of a job, or None if absent, unreadable, corrupted or for another key."""
        path = self.path(spec)
        if not path.is_file():
            return None
        try:
            table = pq.read_table(path)
            meta = table.schema.metadata or {}
            rows = table.to_pandas()
        except Exception:  # any unreadable file is a cache miss, never a result
            self.corrupt.append(path)
            return None
        stored = meta.get(JOB_METADATA_KEY)
        if stored is None or stored.decode(errors="replace") != self.key(spec):
            return None
        if meta.get(ROWS_DIGEST_KEY, b"").decode(errors="replace") != rows_digest(rows):
            self.corrupt.append(path)
            return None
        try:
            self.timings[path] = json.loads(meta[TIMING_KEY])
        except (KeyError, ValueError):
            self.timings.pop(path, None)  # a file of an older rfbench: no timing
        rows.attrs.clear()  # pyarrow restores DataFrame.attrs; the rows are the rows only
        return rows

    def timing(self, spec: JobSpec) -> dict[str, float] | None:
        """The wall and CPU seconds stored with a loaded job, or None."""
        return self.timings.get(self.path(spec))

    def store(
        self, spec: JobSpec, rows: pd.DataFrame, timing: Mapping[str, float] | None = None
    ) -> Path:
        """Cache the rows of a finished job (atomically), with their checksum and, if given,
        the job's measured ``timing`` (metadata beside the key: a cache hit is the same job)."""
        _ensure_marker(self.directory.parent.parent)
        rows = rows.reset_index(drop=True)
        rows.attrs.clear()
        meta = {
            JOB_METADATA_KEY: self.key(spec).encode(),
            ROWS_DIGEST_KEY: rows_digest(rows).encode(),
        }
        if timing is not None:
            meta[TIMING_KEY] = json.dumps(dict(timing)).encode()
        return write_table(rows, self.path(spec), meta)

    def remove_stale_temporaries(self) -> None:
        """Remove the temporary files that killed runs left in this cache."""
        cutoff = time.time() - STALE_TMP_SECONDS
        for path in self.directory.iterdir() if self.directory.is_dir() else []:
            if _TMP_FILE.match(path.name) and path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)


# ----------------------------------------------------------------------------- rfbench cache


@dataclass(frozen=True)
class CacheUsage:
    """The job cache of one output folder (``<folder>/.rfbench-cache``)."""

    folder: Path
    files: int  # job files
    size: int  # bytes of the job files
    current: int  # job files of the current code (the others can never be read again)
    foreign: tuple[Path, ...] = field(default=())  # entries rfbench did not write (left alone)

    @property
    def stale(self) -> int:
        return self.files - self.current


def find_caches(root: Path) -> tuple[list[Path], list[Path]]:
    """(rfbench's job caches, look-alikes it never touches: folders named ``.rfbench-cache``
    without its marker) under ``root``, ``root`` included; symbolic links are not followed."""
    root = Path(root)
    caches: list[Path] = []
    skipped: list[Path] = []
    candidates = [root] if root.name == CACHE_DIRNAME else []
    candidates += [p for p in root.rglob(CACHE_DIRNAME)]
    for path in sorted(set(candidates)):
        if path.is_symlink() or not path.is_dir():
            continue
        (caches if is_rfbench_cache(path) else skipped).append(path)
    return caches, skipped


def _job_files(cache_root: Path) -> tuple[list[Path], list[Path]]:
    """(job files rfbench wrote, other entries) of a marked cache folder."""
    owned: list[Path] = []
    foreign: list[Path] = []
    for entry in cache_root.iterdir():
        if entry.name in (MARKER, LOCK):
            continue
        if entry.name != SHARED or entry.is_symlink() or not entry.is_dir():
            foreign.append(entry)
            continue
        for tag_dir in entry.iterdir():
            if not _TAG.match(tag_dir.name) or tag_dir.is_symlink() or not tag_dir.is_dir():
                foreign.append(tag_dir)
                continue
            for f in tag_dir.iterdir():
                ours = _JOB_FILE.match(f.name) or _TMP_FILE.match(f.name)
                (owned if ours and f.is_file() and not f.is_symlink() else foreign).append(f)
    return owned, foreign


def cache_usage(cache_root: Path) -> CacheUsage:
    """Count the job files of a marked cache folder: current (this code's tag) or stale."""
    tag = code_tag()
    owned, foreign = _job_files(cache_root)
    jobs = [f for f in owned if f.suffix == ".parquet"]
    return CacheUsage(
        folder=cache_root.parent,
        files=len(jobs),
        size=sum(f.stat().st_size for f in owned),
        current=sum(f.parent.name == tag for f in jobs),
        foreign=tuple(foreign),
    )


def clear_cache(cache_root: Path, stale_only: bool = False) -> tuple[int, int]:
    """Remove the job files rfbench wrote in a marked cache (or only the stale ones).

    Returns ``(files, bytes)`` removed. Entries rfbench did not write stay, and so do the folders
    that hold them; empty folders of the cache (and the marker, once nothing else is left) go.
    Raises :class:`CacheInUse` (removing nothing) while a live run holds the cache, and
    ValueError when it is not an rfbench cache or its lock file is a symbolic link.
    """
    if not is_rfbench_cache(cache_root):
        raise ValueError(f"{cache_root} is not an rfbench job cache")
    lock = cache_root / LOCK
    try:
        fd = locks.acquire(lock, exclusive=True, wait=False)
    except locks.Busy:
        raise CacheInUse(f"{cache_root} is in use by a running rfbench") from None
    except locks.LinkRefused as exc:
        raise ValueError(str(exc)) from None
    try:
        removed = _clear_locked(cache_root, stale_only)
        if not any(p.name not in (MARKER, LOCK) for p in cache_root.iterdir()):
            (cache_root / MARKER).unlink()  # under the lock: a run waiting for it makes it again
            lock.unlink()
            cache_root.rmdir()
        return removed
    finally:
        locks.release(fd, lock, remove=False)


def _clear_locked(cache_root: Path, stale_only: bool) -> tuple[int, int]:
    tag = code_tag()
    owned, _ = _job_files(cache_root)
    files = size = 0
    for f in owned:
        if stale_only and f.parent.name == tag:
            continue
        size += f.stat().st_size
        f.unlink(missing_ok=True)
        files += 1
    jobs = cache_root / SHARED
    for tag_dir in list(jobs.iterdir()) if jobs.is_dir() else []:
        if tag_dir.is_dir() and not tag_dir.is_symlink() and not any(tag_dir.iterdir()):
            tag_dir.rmdir()
    if jobs.is_dir() and not any(jobs.iterdir()):
        jobs.rmdir()
    return files, size
