"""The data folder: locate files, verify sha256 (on download and on every load), download
(docs/architecture.md#data).

``$RFBENCH_DATA_URL`` (or the ``base_url`` argument) replaces every registry URL by
``<base>/<path in the data folder>``: a mirror laid out like the data folder. pooch does the HTTP;
the checksum is ours, because gzip files are pinned on their decompressed content and SHA256SUMS
manifests on their entries.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import shutil
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

import platformdirs
import pooch

from rfbench.compute.datasets import errors
from rfbench.compute.datasets.registry import FileSpec

ENV_ROOT = "RFBENCH_DATA"
ENV_URL = "RFBENCH_DATA_URL"
TIMEOUT_S = 30.0
_log = logging.getLogger("rfbench.compute.datasets")
_CHUNK = 1 << 20


def data_root() -> Path:
    """The data folder: ``$RFBENCH_DATA``, else the user cache dir (e.g. ~/.cache/rfbench)."""
    env = os.environ.get(ENV_ROOT)
    return Path(env).expanduser() if env else Path(platformdirs.user_cache_dir("rfbench"))


def locate(spec: FileSpec, root: Path | None = None) -> Path:
    return (root or data_root()) / spec.path


def digest(path: Path, gz: bool = False) -> tuple[str, int]:
    """sha256 and byte count of a file's content (decompressed for gzip), read in chunks."""
    h, n = hashlib.sha256(), 0
    opener: Callable = gzip.open if gz else open
    with opener(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
            n += len(chunk)
    return h.hexdigest(), n


def manifest_entries(path: Path) -> list[tuple[str, str]]:
    """(sha256, file name) pairs of a ``sha256sum``-style SHA256SUMS file."""
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            sha, name = line.split(maxsplit=1)
            entries.append((sha.lower(), name.strip().lstrip("*")))
    return entries


def _check(name: str, spec: FileSpec, path: Path, sha: str, size: int, what: str = "") -> None:
    """DataError unless ``path`` has content sha256 ``sha`` (size 0 = not pinned: manifest
    entries are pinned by hash only)."""
    if not path.is_file():
        raise errors.missing(name, path, spec.path)
    try:
        got, n = digest(path, spec.gz)
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        kind = "a gzip file" if spec.gz else "a readable file"
        raise errors.unreadable(name, path, f"{kind} with sha256 {spec.sha256[:16]}…", exc) from exc
    if got != sha:
        raise errors.mismatch(name, path, got, n, sha, size or None, what)


def verify(name: str, spec: FileSpec, root: Path | None = None) -> Path:
    """Check a file (and a manifest's entries) against the registry; DataError if not good."""
    path = locate(spec, root)
    _check(name, spec, path, spec.sha256, spec.size, "decompressed content" if spec.gz else "")
    if spec.manifest:
        for sha, entry in manifest_entries(path):
            sub = FileSpec(str(Path(spec.path).parent / entry), sha, 0)
            _check(name, sub, path.parent / entry, sha, 0)
    return path


def present(spec: FileSpec, root: Path | None = None) -> bool:
    """Whether the file (and a manifest's entries) exist: a cheap check, no hashing."""
    path = locate(spec, root)
    if not path.is_file():
        return False
    if spec.manifest:
        try:
            return all((path.parent / e).is_file() for _, e in manifest_entries(path))
        except (OSError, ValueError):
            return False
    return True


def urls(spec: FileSpec, base_url: str | None = None) -> tuple[str, ...]:
    """Download locations: the mirror override if set, else the registry's URLs."""
    base = base_url or os.environ.get(ENV_URL)
    if base:
        return (f"{base.rstrip('/')}/{spec.path}",)
    return spec.urls


def _download_one(name: str, spec: FileSpec, dest: Path, sources: tuple[str, ...]) -> None:
    """Fetch ``spec`` to ``dest`` from the first source whose bytes verify; atomic replace."""
    # the folders this download creates: removed again if it fails and leaves them empty
    created = [p for p in [dest.parent, *dest.parent.parents] if not p.exists()]
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmpdir = Path(tempfile.mkdtemp(prefix=".partial-", dir=dest.parent))
    except OSError as exc:
        raise errors.DataError(
            f"data set {name!r}: cannot write to {dest.parent} ({exc.strerror or exc}); "
            f"set RFBENCH_DATA to a writable folder, then run `rfbench data fetch {name}`"
        ) from exc
    reasons = []
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)  # pooch logs the hash of unpinned downloads at INFO
    try:
        for url in sources:
            try:
                got = Path(
                    pooch.retrieve(
                        url, known_hash=None, fname=dest.name, path=tmpdir,
                        downloader=pooch.HTTPDownloader(timeout=TIMEOUT_S),
                    )
                )  # fmt: skip
            except Exception as exc:  # requests/pooch errors: record and try the next URL
                reasons.append(errors.download_reason(exc))
                _log.info("data set %r: %s failed: %s: %s", name, url, type(exc).__name__, exc)
                continue
            try:
                _check(name, spec, got, spec.sha256, spec.size)
            except errors.DataError as exc:
                reasons.append(errors.download_reason(exc))
                _log.info("data set %r: %s failed: %s", name, url, exc)
                got.unlink(missing_ok=True)
                continue
            os.replace(got, dest)
            return
    finally:
        logger.setLevel(level)
        shutil.rmtree(tmpdir, ignore_errors=True)
        if not dest.exists():
            for folder in created:  # deepest first; one that holds anything stays
                try:
                    folder.rmdir()
                except OSError:
                    break
    raise errors.download_failed(name, dest, spec.path, spec.sha256, reasons)


def download(
    name: str, spec: FileSpec, root: Path | None = None, base_url: str | None = None
) -> Path:
    """Download a file (and a manifest's entries, from the same base) and verify it."""
    path = locate(spec, root)
    sources = urls(spec, base_url)
    _download_one(name, spec, path, sources)
    if spec.manifest:
        for sha, entry in manifest_entries(path):
            sub = FileSpec(str(Path(spec.path).parent / entry), sha, 0)
            if not good(name, sub, root):
                _download_one(name, sub, path.parent / entry, urls(sub, base_url))
    return verify(name, spec, root)


def good(name: str, spec: FileSpec, root: Path | None = None) -> bool:
    """Whether the file (and a manifest's entries) verify."""
    try:
        verify(name, spec, root)
    except errors.DataError:
        return False
    return True


def ensure(name: str, spec: FileSpec, *, download_missing: bool = True) -> Path:
    """A verified path to the file: verify a present file (never used if corrupt); download a
    missing one when allowed. Every failure is a one-line DataError."""
    if present(spec) or not download_missing or not urls(spec):
        return verify(name, spec)
    return download(name, spec)


def fetch(name: str, spec: FileSpec, *, base_url: str | None = None) -> str:
    """``rfbench data fetch``: 'ok' if a verified copy is there, else download; a corrupt copy is
    replaced. Returns 'ok' or 'downloaded'."""
    if present(spec) and good(name, spec, None):
        return "ok"
    download(name, spec, None, base_url)
    return "downloaded"
