"""Bad input ends with exit status 2 and one clear line on stderr (docs/architecture.md#cli)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])


class UserError(ValueError):
    """Bad input from the user: reported in one line, no traceback."""


def fail(message: str) -> None:
    """Print ``rfbench: error: message`` to stderr and exit with status 2."""
    print(f"rfbench: error: {message}", file=sys.stderr)
    raise typer.Exit(2)


USER_ERRORS = (ValueError, LookupError, OSError, ArithmeticError)


def handle_errors(fn: F) -> F:
    """Report bad input (ValueError and its kin, a failed job) in one line with exit status 2.

    RFBENCH_DEBUG=1 shows the traceback instead.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if os.environ.get("RFBENCH_DEBUG"):
            return fn(*args, **kwargs)
        from rfbench.runner import JobFailed

        try:
            return fn(*args, **kwargs)
        except USER_ERRORS as exc:
            fail(_first_line(exc))
        except JobFailed as exc:  # bad input met inside a job: one line; a bug: the traceback
            if isinstance(exc.__cause__, USER_ERRORS):
                fail(_first_line(exc.__cause__))
            raise

    return wrapper  # type: ignore[return-value]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def user_errors(*kinds: type[BaseException]) -> Callable[[F], F]:
    """Turn the given exception types (and UserError) into ``fail(str(exc))``."""
    caught = (UserError, *kinds)

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except caught as exc:
                fail(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)

        return wrapper  # type: ignore[return-value]

    return deco
