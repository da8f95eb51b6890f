"""The ``rfbench`` Typer app and :func:`cli`, which runs it and returns the exit status
(docs/architecture.md#cli).

Commands are built on first use, so ``rfbench --help``, ``--version`` and shell completion start at
once (building an experiment's command imports numpy, pandas and scipy): :class:`LazyGroup` lists
the built-in commands from :data:`COMMANDS` and the built-in experiments from their source files
(:func:`builtin_experiments`, with :mod:`ast`), and builds only the command invoked; with plugins
installed the experiment list comes from the registry (importing).
"""

from __future__ import annotations

import ast
import difflib
import functools
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

import rfbench
from rfbench import INTERRUPTED_EXIT, USER_EXIT
from rfbench.cli.errors import report_exception, set_debug
from rfbench.compute.text import first_sentence

EXPERIMENTS_DIR = Path(__file__).resolve().parents[1] / "compute" / "experiments"


#: name -> (one-line help, ``module:attribute``) of the commands that are not experiments, in
#: listing order; the attribute is a Typer app (a group) or a function (a command)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("Run any experiment from a TOML config file.", "rfbench.cli.experiments:run_config"),
    "reproduce": (
        "Run every config in configs/ (default profile: quick).",
        "rfbench.cli.experiments:reproduce",
    ),
    "figures": ("Redraw every figure (PNG, PDF) from the results.", "rfbench.cli.present:figures"),
    "report": ("REPORT.md: the papers' numbers and claims vs ours.", "rfbench.cli.present:report"),
    "site": ("A browsable HTML site of the results (works offline).", "rfbench.cli.present:site"),
    "compare": (
        "Two result folders side by side: numbers beyond noise, timing ratios.",
        "rfbench.cli.present:compare",
    ),
    "list": (
        "List estimators, weights, data sets, experiments, figures.",
        "rfbench.cli.groups:list_app",
    ),
    "data": ("Download and verify data sets.", "rfbench.cli.groups:data_app"),
    "cache": ("Show or remove the job caches of results folders.", "rfbench.cli.groups:cache_app"),
}


def _command(name: str) -> Any:
    """The click command of :data:`COMMANDS` ``name``."""
    short_help, where = COMMANDS[name]
    module, attribute = where.split(":")
    target = getattr(importlib.import_module(module), attribute)
    if isinstance(target, typer.Typer):
        return typer.main.get_group(target)
    single = _single_app()
    single.command(short_help=short_help)(target)
    return typer.main.get_command(single)


def _single_app() -> typer.Typer:
    """A Typer app of commands built apart from the top-level group (click's help layout)."""
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


def _constant(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


@functools.cache
def builtin_experiments() -> dict[str, tuple[str, str]]:
    """name -> (tagline, description) of every experiment class registered in
    ``rfbench/compute/experiments``, read from the source (a class decorated
    ``@register_experiment`` with a constant ``name``)."""
    found: dict[str, tuple[str, str]] = {}
    for path in sorted(EXPERIMENTS_DIR.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if "@register_experiment" not in source:
            continue
        for node in ast.parse(source).body:
            decorators = [
                ast.unparse(d).rsplit(".")[-1] for d in getattr(node, "decorator_list", [])
            ]
            if not isinstance(node, ast.ClassDef) or "register_experiment" not in decorators:
                continue
            attrs = {
                target.id: _constant(stmt.value)
                for stmt in node.body
                if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None
                for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                if isinstance(target, ast.Name)
            }
            if attrs.get("name"):
                found[attrs["name"]] = (attrs.get("tagline") or "", attrs.get("description") or "")
    return dict(sorted(found.items()))


@functools.cache
def experiment_texts() -> dict[str, tuple[str, str]]:
    """name -> (one-line help, description) of every experiment: from the sources, or (with
    plugins installed) from the registry."""
    from importlib.metadata import entry_points

    from rfbench.compute.plugins import ENTRY_POINT_GROUP

    if not entry_points(group=ENTRY_POINT_GROUP):
        return {
            name: (tagline or first_sentence(description), description)
            for name, (tagline, description) in builtin_experiments().items()
        }
    from rfbench.compute.experiments import list_experiments

    return {e.name: (e.short_description(), e.description) for e in list_experiments()}


def _experiment_command(name: str) -> Any:
    from rfbench.cli.experiments import add_experiment_command
    from rfbench.compute.experiments import get_experiment

    single = _single_app()
    add_experiment_command(single, get_experiment(name))
    return typer.main.get_command(single)


def _registered(name: str) -> bool:
    """Whether an experiment of that name is registered at run time (a module imported before
    the command line, a test): the slow path, taken only for a name not found otherwise."""
    from rfbench.compute.experiments import list_experiments

    return any(e.name == name for e in list_experiments())


class LazyGroup(TyperGroup):
    """The top-level group: lists commands from declarations, builds the one invoked."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*experiment_texts(), *COMMANDS, *super().list_commands(ctx)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in COMMANDS:
            command = _command(cmd_name)
        elif command is None and (cmd_name in experiment_texts() or _registered(cmd_name)):
            command = _experiment_command(cmd_name)
        if command is not None:
            command.name = cmd_name
            self.add_command(command, cmd_name)
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """As click's, with "Did you mean" among every command (Typer's suggests among the commands
        built so far, which here is none)."""
        try:
            return super().resolve_command(ctx, args)
        except typer.TyperException as exc:  # click's UsageError
            if args and exc.message.startswith("No such command"):
                close = difflib.get_close_matches(args[0], self.list_commands(ctx))
                exc.message = f"No such command {args[0]!r}." + (
                    f" Did you mean {', '.join(map(repr, close))}?" if close else ""
                )
            raise

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list from the declarations (building none of them)."""
        helps = {name: texts[0] for name, texts in {**experiment_texts(), **COMMANDS}.items()}
        rows = [(name, helps[name]) for name in self.list_commands(ctx) if name in helps]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


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
    if type(exc).__name__ != "NoSuchOption" or not getattr(exc, "possibilities", None):
        return exc
    name = exc.option_name.lstrip("-")
    close = [
        p
        for p in exc.possibilities
        if difflib.SequenceMatcher(None, name, p.lstrip("-")).ratio() >= SUGGESTION_CUTOFF
    ]
    return type(exc)(exc.option_name, possibilities=close or None, ctx=exc.ctx)
