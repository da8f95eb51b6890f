"""The ``rfbench`` command line (docs/architecture.md#cli): thin — parse, validate, call.

``list``, ``data`` and ``cache`` are fixed Typer sub-apps; one subcommand per registered experiment
is generated from its parameters (rfbench.cli.experiments), plus ``run`` and ``reproduce``. How
errors end (exit status 2 for user errors, 1 for bugs): :mod:`rfbench.cli.errors`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

import rfbench
from rfbench.cli import cache, data, listing
from rfbench.cli.compare import compare
from rfbench.cli.errors import USER_EXIT, report_exception, set_debug
from rfbench.cli.experiments import add_config_commands, add_experiment_command
from rfbench.cli.figures import figures
from rfbench.cli.report import report
from rfbench.cli.site import site
from rfbench.entry import INTERRUPTED_EXIT
from rfbench.experiments import list_experiments

app = typer.Typer(
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


app.add_typer(
    listing.app,
    name="list",
    short_help="List estimators, weights, data sets, experiments, figures.",
)
app.add_typer(data.app, name="data")
app.add_typer(cache.app, name="cache")
for _experiment in list_experiments():
    add_experiment_command(app, _experiment)
add_config_commands(app)
app.command("figures", short_help="Redraw every figure (PNG, PDF) from the results.")(figures)
app.command("report", short_help="REPORT.md: the papers' numbers and claims vs ours.")(report)
app.command("site", short_help="A browsable HTML site of the results (works offline).")(site)
app.command(
    "compare", short_help="Two result folders side by side: numbers beyond noise, timing ratios."
)(compare)


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
        message = " ".join(exc.format_message().split())
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


def main() -> None:  # pragma: no cover - console entry
    from rfbench.entry import main as entry_main

    entry_main()
