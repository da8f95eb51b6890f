"""A progress bar on stderr (jobs done/total, elapsed, ETA), shown for runs longer than ~1 s.

Jobs count whole when they finish; a running job's in-job progress (``job_progress``) moves the
bar by its share meanwhile (at most 99 % of a job before it finishes), so a run of a few long jobs
shows an ETA.
"""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class JobProgress:
    """``with JobProgress(total, done, ...) as bar: bar.advance()``; appears after ``delay`` s."""

    def __init__(
        self,
        total: int,
        done: int = 0,
        *,
        description: str = "jobs",
        enabled: bool = True,
        delay: float = 1.0,
        console: Console | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._partial: dict[int, float] = {}  # in-job progress credited to running jobs
        self._finished: set[int] = set()
        self._started = False
        self._closed = False
        self._progress: Progress | None = None
        self._timer: threading.Timer | None = None
        if enabled:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("elapsed"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=console or Console(stderr=True),
            )
            self._task = self._progress.add_task(description, total=total, completed=done)
            self._delay = delay

    def __enter__(self) -> JobProgress:
        if self._progress is not None:
            self._timer = threading.Timer(self._delay, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _start(self) -> None:
        with self._lock:
            if not self._closed and self._progress is not None:
                self._progress.start()
                self._started = True

    def advance(self, n: float = 1) -> None:
        """Count ``n`` more finished jobs."""
        if self._progress is not None:
            self._progress.advance(self._task, n)

    def job_progress(self, index: int, fraction: float) -> None:
        """Job ``index`` (still running) finished ``fraction`` more of its work."""
        if index in self._finished:
            return
        before = self._partial.get(index, 0.0)
        now = min(0.99, before + fraction)
        self._partial[index] = now
        self.advance(now - before)

    def job_done(self, index: int) -> None:
        """Job ``index`` finished: count it whole (minus what its progress already counted)."""
        self._finished.add(index)
        self.advance(1.0 - self._partial.pop(index, 0.0))

    def __exit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._closed = True
            if self._started and self._progress is not None:
                self._progress.stop()
