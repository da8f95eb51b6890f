"""How the command line ends on an exception (docs/architecture.md#errors): a user error
(:class:`rfbench.compute.checks.UserError`, also when a job raised it) is one line
``rfbench: error: <message>`` and exit status 2; anything else is a bug, exit status 1 and one line
naming a log file (in ``$RFBENCH_LOG_DIR``, else the per-user log folder, else the temporary
folder) that holds the command line and the traceback. ``--debug`` or ``RFBENCH_DEBUG=1`` also
prints the traceback on stderr.
"""

from __future__ import annotations

import datetime as _dt
import errno
import functools
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from rfbench import INTERNAL_EXIT, USER_EXIT
from rfbench.compute.checks import UserError

__all__ = ["UserError", "explain", "handle_errors", "report_exception", "set_debug"]

F = TypeVar("F", bound=Callable[..., Any])
_debug = False


def set_debug(on: bool) -> None:
    """Print tracebacks (the global ``--debug`` option)."""
    global _debug
    _debug = on


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type name if it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


#: operating-system errors that are the machine's state, not a bug: no permission, a read-only
#: file system, a full disk or quota
ENVIRONMENT_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT})


def user_error(exc: BaseException) -> BaseException | None:
    """The user error behind ``exc`` (itself, or the cause of a failed job), else None.

    An :class:`OSError` of :data:`ENVIRONMENT_ERRNOS` (an unwritable folder, a full disk) counts
    as one, told as ``cannot use <file>: <reason>``.
    """
    from rfbench.compute.runner import JobFailed

    if isinstance(exc, JobFailed) and isinstance(exc.__cause__, UserError):
        return exc.__cause__
    if isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS:
        where = f" {exc.filename}" if exc.filename else ""
        return UserError(f"cannot use{where}: {exc.strerror or os.strerror(exc.errno)}")
    return exc if isinstance(exc, UserError) else None


def describe(exc: BaseException) -> str:
    """``<type>: <message>``; for a failed job, its cause's and the job's name."""
    from rfbench.compute.runner import JobFailed

    if isinstance(exc, JobFailed) and exc.__cause__ is not None:
        cause = exc.__cause__
        job = f" in job {exc.spec!r} of experiment {exc.experiment!r}"
        return f"{type(cause).__name__}: {first_line(cause)}{job}"
    return f"{type(exc).__name__}: {first_line(exc)}"


def write_log(exc: BaseException) -> Path:
    """A new log file holding the command line, the versions and the traceback of ``exc``
    ($RFBENCH_LOG_DIR, else the per-user log folder, else the temporary folder)."""
    import platformdirs

    import rfbench

    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    prefix = f"rfbench-{stamp}-{os.getpid()}-"
    try:
        folder = Path(os.environ.get("RFBENCH_LOG_DIR") or platformdirs.user_log_dir("rfbench"))
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".log", dir=folder)
    except OSError:
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f"command: {' '.join(sys.argv)}\n")
        fh.write(f"rfbench {rfbench.__version__}, python {sys.version.split()[0]}, {stamp}\n\n")
        fh.write("".join(traceback.format_exception(exc)))
    return Path(name)


def explain(exc: BaseException) -> str:
    """What the one line says of ``exc``: a user error's first line, else :func:`describe` and a
    new log file holding its traceback (:func:`write_log`)."""
    user = user_error(exc)
    return (
        first_line(user) if user is not None else f"{describe(exc)} (traceback in {write_log(exc)})"
    )


def report_exception(exc: BaseException) -> int:
    """Print the one line for ``exc`` (and its traceback with --debug); return the exit status."""
    if _debug or os.environ.get("RFBENCH_DEBUG", "0") not in ("", "0"):
        traceback.print_exception(exc, file=sys.stderr)
    user = user_error(exc) is not None
    print(f"rfbench: {'error' if user else 'internal error'}: {explain(exc)}", file=sys.stderr)
    return USER_EXIT if user else INTERNAL_EXIT


def handle_errors(fn: F) -> F:
    """Decorate a command: user errors exit 2 in one line, bugs exit 1 naming a log file."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise  # exits and usage errors: the command line's own handling
        except Exception as exc:
            raise typer.Exit(report_exception(exc)) from None

    return wrapper  # type: ignore[return-value]
