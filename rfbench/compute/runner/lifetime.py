"""Worker processes never outlive the run that started them, whatever ends it.

On Linux a worker asks the kernel to send it SIGKILL when its parent dies (``prctl`` with
``PR_SET_PDEATHSIG``), which covers SIGKILL of the main process too; elsewhere, and as a fallback,
a daemon thread polls the parent's pid once a second and ends the worker when it changes.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

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
