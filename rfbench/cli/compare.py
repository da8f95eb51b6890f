"""``rfbench compare A B``: did the numbers move beyond their noise, did anything get slower?

Thin: parse, call :func:`rfbench.present.compare.compare.compare`, print and exit. Exit status:
0, or 1 when a ``--fail-on`` condition holds (CI), 2 for a user error (one line,
:mod:`rfbench.cli.errors`): among them runs of different configs without ``--across-configs``, a
damaged or oversized result file, and a ``--markdown`` path that cannot be a file (checked before
any work).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rfbench.cli.errors import handle_errors
from rfbench.cli.show import console, print_frame
from rfbench.compute.checks import UserError


def markdown_target(markdown: str) -> Path | None:
    """The file ``--markdown`` names (None if not given), refused before any work if it is a
    folder or lies under a file."""
    if not markdown:
        return None
    path = Path(markdown)
    if path.is_dir():
        raise UserError(f"--markdown {markdown} is a folder; give a file name, e.g. "
                        f"{path / 'compare.md'}")  # fmt: skip
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise UserError(f"--markdown {markdown}: {parent} is a file, not a folder")
    return path


@handle_errors
def compare(
    a: str = typer.Argument(
        ..., metavar="A", help="Results folder (or result file) A: the baseline."
    ),
    b: str = typer.Argument(
        ..., metavar="B", help="Results folder (or result file) B: compared with A."
    ),
    z: float = typer.Option(
        4.0, help="Flag a row whose |B − A|/SE is beyond this z, family-wise across rows."
    ),
    method: str = typer.Option(
        "holm", help="Family-wise correction across rows: holm, bonferroni or none."
    ),
    markdown: str = typer.Option("", help="Also write the whole comparison to this markdown file."),
    fail_on: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 if 'numbers' (a row flagged, non-finite on one side or missing, or a "
            "file of A missing) or 'slower:FACTOR' (a file's jobs took more than FACTOR × A's "
            "CPU time); repeat or comma-separate.",
        ),
    ] = None,
    rows: int = typer.Option(20, help="Shared rows shown in the terminal, largest |z| first."),
    across_configs: bool = typer.Option(
        False,
        "--across-configs",
        help="Compare files whose runs had different configs or profiles, on the rows both "
        "have (refused without it): the others are not missing, no time B/A is formed.",
    ),
    max_memory: str = typer.Option(
        "",
        "--max-memory",
        metavar="SIZE",
        help="Memory budget, e.g. 4G (default: half the available memory); larger result files "
        "are refused before they are read.",
    ),
) -> None:
    """Two result folders side by side: row differences with standard errors, timing ratios."""
    from rfbench.compute.results import atomic_write
    from rfbench.compute.runner.memory import parse_size
    from rfbench.present.compare import output
    from rfbench.present.compare.compare import compare as run_compare
    from rfbench.present.compare.compare import gate_failures, parse_fail_on

    numbers, slower = parse_fail_on(fail_on or [])
    target = markdown_target(markdown)
    budget = parse_size(max_memory or None)
    result = run_compare(a, b, z=z, method=method, max_memory=budget, across_configs=across_configs)
    warning = output.config_warning(result)
    if warning:
        typer.secho(f"rfbench: warning: {warning}", err=True, fg="yellow")
    print_frame(output.summary_table(result), f"rfbench compare: {a} (A) vs {b} (B)", max_rows=1000)
    for side, names in (("A", result.only_a), ("B", result.only_b)):
        if names:
            console.print(f"only in {side}: {', '.join(names)}")
    flagged = output.row_table(result, only_flagged=True)
    if len(flagged):
        print_frame(flagged, f"{len(flagged)} flagged row(s)", max_rows=rows)
    else:
        moved = output.row_table(result, limit=rows, moved=True)
        if len(moved):
            print_frame(moved, "largest differences (none flagged)", max_rows=rows)
    for which in ("missing", "new"):
        table = output.changed_rows(result, which)
        if len(table):
            print_frame(table, f"{len(table)} {which} row(s)", max_rows=rows)
    console.print(output.summary_line(result))
    if target is not None:
        text = output.markdown(result, a, b)
        try:
            atomic_write(target, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        except OSError as exc:
            raise UserError(f"cannot write --markdown {target}: {exc.strerror or exc}") from None
        console.print(f"markdown: {target}")
    failed = gate_failures(result, numbers, slower)
    if failed:
        typer.echo(f"rfbench compare: {'; '.join(failed)}", err=True)
        raise typer.Exit(1)
