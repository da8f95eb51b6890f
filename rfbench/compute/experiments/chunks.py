"""How a job walks through its work: chunks of bounded size, with progress reported per chunk.

Every experiment's batch loop takes its chunk size from :func:`chunk_size`, so one working array
of a job holds at most :data:`CHUNK_BYTES` (a single item larger than that, e.g. one draw of
10⁷ features, is processed alone). After each chunk a job calls :func:`advance` with the share of
the job it finished; the runner installs a sink (:func:`reporting`) that carries these shares to
the progress bar, even from worker processes. Outside a run :func:`advance` does nothing.
Progress is a side channel only: it never changes what a job computes or returns.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

#: bound on the bytes of one working array of a job (a few such arrays are alive at once)
CHUNK_BYTES = 32 * 2**20
#: chunk budget of hot loops that pass over their arrays many times: they stay in the CPU cache
#: (measured: HRF Fig. 2 jobs 30 % faster than with CHUNK_BYTES)
CACHE_BYTES = 2 * 2**20

_sink: ContextVar[Callable[[float], None] | None] = ContextVar("rfbench_progress", default=None)


def chunk_size(bytes_per_item: float, total: int, budget: int = CHUNK_BYTES) -> int:
    """Items per chunk so that one chunk's array stays within ``budget`` bytes: in [1, total]."""
    return int(min(max(total, 1), max(1, budget // max(bytes_per_item, 1))))


def chunks(
    total: int, bytes_per_item: float, share: float = 1.0, budget: int = CHUNK_BYTES
) -> Iterator[tuple[int, int]]:
    """(start, stop) of consecutive chunks of ``range(total)`` within ``budget`` bytes; after
    each, reports ``share`` · (its size / total) of the job as done."""
    step = chunk_size(bytes_per_item, total, budget)
    for start in range(0, total, step):
        stop = min(total, start + step)
        yield start, stop
        advance(share * (stop - start) / total)


def advance(fraction: float) -> None:
    """Report that ``fraction`` (0..1) more of the current job is done (no-op outside a run)."""
    sink = _sink.get()
    if sink is not None:
        sink(fraction)


@contextlib.contextmanager
def reporting(sink: Callable[[float], None]) -> Iterator[None]:
    """Within this context, :func:`advance` calls ``sink(fraction)``."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)
