"""Advisory file locks (``fcntl.flock``) between rfbench processes: a run holds its output's lock
exclusively and its job cache's shared (docs/architecture.md#job-cache). An exclusive holder
removes its lock file when it lets go; whoever opened that file meanwhile sees that the path no
longer names the file it locked and opens the new one. Without ``fcntl`` (Windows) the files are
made but nothing is locked.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]


class Busy(Exception):
    """The lock is held by another process (``holder``: its pid as it wrote it, or "")."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is locked by process {holder or '(unknown)'}")
        self.path = path
        self.holder = holder


class LinkRefused(OSError):
    """The lock's path is a symbolic link: rfbench never opens a lock through one (truncating
    it and writing a pid would overwrite whatever file the link names)."""

    def __init__(self, path: Path) -> None:
        why = "is a symbolic link; rfbench never locks through one (remove it)"
        super().__init__(errno.ELOOP, why, str(path))
        self.path = path

    def __str__(self) -> str:
        return f"lock file {self.path} {self.strerror}"


#: open flags of a lock file: never through a symbolic link, never inherited by a child
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _holder(path: Path) -> str:
    with contextlib.suppress(OSError, ValueError):
        return path.read_text(encoding="ascii").strip()[:20]
    return ""


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (mine.st_dev, mine.st_ino)


def acquire(path: Path, *, exclusive: bool, wait: bool) -> int:
    """Open (creating it and its folder) and lock ``path``; return the file descriptor.

    Raises :class:`Busy` when ``wait`` is false and another process holds a conflicting lock,
    :class:`LinkRefused` when ``path`` is a symbolic link (never followed, never written through)
    and :class:`OSError` when the file cannot be created. An exclusive holder's pid is written into
    the file (for the message of whoever finds it busy).
    """
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():  # also where O_NOFOLLOW is missing; O_NOFOLLOW closes the race
            raise LinkRefused(path)
        try:
            fd = os.open(path, _FLAGS, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LinkRefused(path) from None
            if not isinstance(exc, FileNotFoundError):
                raise
            if not path.parent.is_dir():
                continue  # the folder was removed under us (cache clear): make it again
            raise
        if fcntl is None:
            break
        flags = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            os.close(fd)
            raise Busy(path, _holder(path)) from None
        if _same_file(fd, path):
            break
        os.close(fd)  # its last holder removed it while we waited: lock the new one
    if exclusive:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def release(fd: int, path: Path, *, remove: bool) -> None:
    """Unlock ``fd`` (by closing it); with ``remove`` (exclusive holders) delete ``path`` first."""
    if remove and _same_file(fd, path):
        with contextlib.suppress(OSError):
            path.unlink()
    os.close(fd)


@contextlib.contextmanager
def held(path: Path, *, exclusive: bool, wait: bool) -> Iterator[None]:
    """Hold a lock on ``path`` for the ``with`` block (an exclusive lock file is removed after)."""
    fd = acquire(path, exclusive=exclusive, wait=wait)
    try:
        yield
    finally:
        release(fd, path, remove=exclusive)
