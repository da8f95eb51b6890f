"""Commands built on first use, so ``rfbench --help``, ``--version`` and shell completion start at
once (building an experiment's command imports numpy, pandas and scipy).

:class:`LazyGroup` lists the built-in commands from :data:`COMMANDS` and the built-in experiments
from their source files (:func:`builtin_experiments`, with :mod:`ast`), and builds only the command
invoked; with plugins installed the experiment list comes from the registry (importing).
"""

from __future__ import annotations

import ast
import difflib
import functools
import importlib
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

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


__all__ = ["COMMANDS", "LazyGroup", "builtin_experiments", "experiment_texts"]
