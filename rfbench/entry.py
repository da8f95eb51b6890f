"""The ``rfbench`` console command: the CLI, with Ctrl-C handled from the first instant.

This module imports nothing heavy before it has set up the interrupt handling, so a Ctrl-C while
the CLI is still importing ends as quietly as one during a run: one line, exit status 130, and no
worker process left behind. Finished jobs are in the job cache (written atomically), so running
the same command again resumes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from rfbench import INTERRUPTED_EXIT

MESSAGE = "rfbench: interrupted — run the same command again to resume"


def interrupted() -> None:
    """Stop now: ignore further Ctrl-C, end the worker processes, say so, exit 130.

    ``os._exit`` skips the interpreter's exit handlers, which may wait on a process pool's
    threads; nothing is lost, since results and cached jobs are written atomically.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(Exception):  # exiting anyway; the workers also die with this process
        import multiprocessing

        for child in multiprocessing.active_children():
            child.kill()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os.write(2, f"\n{MESSAGE}\n".encode())
    os._exit(INTERRUPTED_EXIT)


def main() -> None:  # pragma: no cover - console entry (tested through subprocesses)
    for stream in (sys.stdout, sys.stderr):  # a console that cannot show σ or ━ gets '?' for them
        with contextlib.suppress(AttributeError, ValueError):  # (it raised UnicodeEncodeError)
            stream.reconfigure(errors="replace")
    try:
        from rfbench.cli.app import cli

        status = cli()
    except KeyboardInterrupt:
        interrupted()
    if status == INTERRUPTED_EXIT:
        interrupted()
    sys.exit(status)
