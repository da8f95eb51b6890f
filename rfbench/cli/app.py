"""The ``rfbench`` Typer app and :func:`cli`, which runs it and returns the exit status
(docs/architecture.md#cli); every command is built when invoked (:mod:`rfbench.cli.lazy`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

import rfbench
from rfbench import INTERRUPTED_EXIT, USER_EXIT
from rfbench.cli.errors import report_exception, set_debug
from rfbench.cli.lazy import LazyGroup

app = typer.Typer(
    cls=LazyGroup,  # commands are built when invoked: --help and --version start at once
    name="rfbench",
    help="Benchmarks of random-feature kernel estimators (HRF, SimRF, DERF, CSE, Spectraformer).",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's layout: all option names readable at 80 columns
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"rfbench {rfbench.__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option("--debug", help="Print the traceback of any error (also: RFBENCH_DEBUG=1)."),
    ] = False,
) -> None:
    set_debug(debug)
    # a command explains its tables once (rfbench.cli.show): forget the footnotes an earlier
    # command of this process printed (only a process that printed tables has any)
    show = sys.modules.get("rfbench.cli.show")
    if show is not None:
        show.FOOTNOTES_SHOWN.clear()


def cli(args: Sequence[str] | None = None) -> int:
    """Run the command line on ``args`` (default: sys.argv) and return its exit status.

    Usage errors (an unknown option, a missing argument) end in one line with status 2, like every
    user error; an exception no command caught is reported as an internal error (status 1).
    """
    try:
        status = app(args=args, prog_name="rfbench", standalone_mode=False)
    except typer.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `rfbench`: the help, as click does
            print(exc.format_message())
            return USER_EXIT
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        message = " ".join(_without_far_suggestions(exc).format_message().split())
        print(f"rfbench: error: {message}{hint}", file=sys.stderr)
        return int(getattr(exc, "exit_code", USER_EXIT))
    except typer.Abort as exc:
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            return INTERRUPTED_EXIT  # the console entry ends the process (rfbench.entry)
        print("Aborted!", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return INTERRUPTED_EXIT
    except Exception as exc:
        return report_exception(exc)
    return status if isinstance(status, int) else 0


#: how alike (difflib ratio of the names without dashes) a suggested option must be
SUGGESTION_CUTOFF = 0.6


def _without_far_suggestions(exc: Exception) -> Exception:
    """An unknown option's error suggesting only options whose names are alike (click's own
    cutoff offers ``--out`` for ``--nosuch``)."""
    import difflib

    if type(exc).__name__ != "NoSuchOption" or not getattr(exc, "possibilities", None):
        return exc
    name = exc.option_name.lstrip("-")
    close = [
        p
        for p in exc.possibilities
        if difflib.SequenceMatcher(None, name, p.lstrip("-")).ratio() >= SUGGESTION_CUTOFF
    ]
    return type(exc)(exc.option_name, possibilities=close or None, ctx=exc.ctx)
