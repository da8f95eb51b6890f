"""How much memory this process may use: the tightest of three limits decides
(docs/architecture.md#cli):

- :data:`DEFAULT_FRACTION` of the memory available now (Linux ``MemAvailable``), shared by the
  workers;
- the address-space limit (``ulimit -v``, ``RLIMIT_AS``) less what the process maps, per worker;
- the cgroup's memory limit (v2 ``memory.max``, v1 ``memory.limit_in_bytes``) less its usage,
  shared by the workers.

``--max-memory`` sets the budget of one job (the two hard limits still apply); the command line
states it once (:func:`set_requested`) so that readers of user files check against the same budget.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

#: the share of the available memory a run takes by default
DEFAULT_FRACTION = 0.5
#: cgroup files of the limit and the usage: (v2 limit, v2 usage), (v1 limit, v1 usage)
_CGROUP_FILES = (
    ("memory.max", "memory.current"),
    ("memory.limit_in_bytes", "memory.usage_in_bytes"),
)
#: a cgroup v1 "no limit" is a huge number (PAGE_COUNTER_MAX pages); anything above is unlimited
_UNLIMITED = 2**60

_requested: int | None = None


@dataclass(frozen=True)
class Budget:
    """The bytes one job may use and the limit that sets them (for messages)."""

    bytes: int
    source: str


def human(n: float) -> str:
    """Bytes for people: 1.5 GiB, 300 MiB."""
    for unit, power in (("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= (size := 2**power):
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def _proc_bytes(path: str, field: str) -> int | None:
    """A ``field: N kB`` line of a Linux /proc file, in bytes; None where there is none."""
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def available_memory() -> int:
    """Bytes of memory available now (Linux: MemAvailable), else the physical memory."""
    available = _proc_bytes("/proc/meminfo", "MemAvailable")
    if available is not None:
        return available
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError, AttributeError):
        return 8 * 2**30


def address_space_headroom() -> int | None:
    """Bytes this process may still map under ``ulimit -v`` (RLIMIT_AS); None if unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    return max(soft - (_proc_bytes("/proc/self/status", "VmSize") or 0), 0)


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None  # "max": no limit


def _cgroup_dirs(root: Path, membership: Path) -> list[Path]:
    """The memory cgroup folders of this process (v2 unified, v1 memory controller), innermost
    first, then their parents up to the mount point."""
    try:
        lines = membership.read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    found = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        if controllers == "":  # v2
            base = root
        elif "memory" in controllers.split(","):
            base = root / "memory"
        else:
            continue
        folder = base / rel.lstrip("/")
        while True:
            found.append(folder)
            if folder == base or base not in folder.parents:
                break
            folder = folder.parent
    return found


def cgroup_headroom(
    root: Path = Path("/sys/fs/cgroup"), membership: Path = Path("/proc/self/cgroup")
) -> int | None:
    """Bytes the process's memory cgroup may still use (the tightest limit of the group and its
    parents, less their usage); None if no limit is set or none can be read.

    ``root`` is where the cgroup file systems are mounted, ``membership`` the process's
    ``/proc/self/cgroup`` (lines ``id:controllers:path``; v2 has no controllers)."""
    room: int | None = None
    for folder in _cgroup_dirs(root, membership):
        for limit_file, usage_file in _CGROUP_FILES:
            limit = _read_int(folder / limit_file)
            if limit is None or limit >= _UNLIMITED:
                continue
            usage = _read_int(folder / usage_file) or 0
            left = max(limit - usage, 0)
            room = left if room is None else min(room, left)
    return room


def set_requested(max_memory: int | None) -> None:
    """Record ``--max-memory`` (bytes, or None for the default) for this command."""
    global _requested
    _requested = max_memory


def budget(workers: int = 1, max_memory: int | None = None) -> Budget:
    """The bytes one job may use when ``workers`` jobs run at once, and the limit that sets them.

    ``max_memory`` (default: the command's ``--max-memory``, :func:`set_requested`) replaces the
    share of the available memory; ``ulimit -v`` and the cgroup limit apply either way.
    """
    workers = max(1, workers)
    max_memory = _requested if max_memory is None else max_memory
    if max_memory:
        candidates = [Budget(int(max_memory), "--max-memory")]
    else:
        share = int(DEFAULT_FRACTION * available_memory() / workers)
        candidates = [Budget(share, f"half the available memory / {workers} worker(s)")]
    if (room := address_space_headroom()) is not None:
        candidates.append(Budget(room, "the address-space limit left by ulimit -v (RLIMIT_AS)"))
    if (room := cgroup_headroom()) is not None:
        candidates.append(Budget(room // workers, f"the cgroup memory limit / {workers} worker(s)"))
    return min(candidates, key=lambda b: b.bytes)
