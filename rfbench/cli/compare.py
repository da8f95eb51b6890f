"""``rfbench compare A B``: did the numbers move beyond their noise, did anything get slower?

Thin: parse, call :func:`rfbench.compare.compare`, print and exit. Exit status: 0, or 1 when a
``--fail-on`` condition holds (CI), 2 for a user error (one line, :mod:`rfbench.cli.errors`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rfbench.cli.errors import handle_errors
from rfbench.cli.show import console, print_frame


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
            help="Exit 1 if 'numbers' (a row flagged or missing) or 'slower:FACTOR' (a file's "
            "jobs took more than FACTOR × A's CPU time); repeat or comma-separate.",
        ),
    ] = None,
    rows: int = typer.Option(20, help="Shared rows shown in the terminal, largest |z| first."),
) -> None:
    """Two result folders side by side: row differences with standard errors, timing ratios."""
    from rfbench.compare import changed_rows, parse_fail_on, row_table, summary_table
    from rfbench.compare import compare as run_compare
    from rfbench.compare import markdown as to_markdown

    numbers, slower = parse_fail_on(fail_on or [])
    result = run_compare(a, b, z=z, method=method)
    print_frame(summary_table(result), f"rfbench compare: {a} (A) vs {b} (B)", max_rows=1000)
    for side, names in (("A", result.only_a), ("B", result.only_b)):
        if names:
            console.print(f"only in {side}: {', '.join(names)}")
    flagged = row_table(result, only_flagged=True)
    if len(flagged):
        print_frame(flagged, f"{len(flagged)} flagged row(s)", max_rows=rows)
    else:
        moved = row_table(result, limit=rows, moved=True)
        if len(moved):
            print_frame(moved, "largest differences (none flagged)", max_rows=rows)
    for which in ("missing", "new"):
        table = changed_rows(result, which)
        if len(table):
            print_frame(table, f"{len(table)} {which} row(s)", max_rows=rows)
    console.print(
        f"{result.tests} rows with standard errors, z = {z:g} family-wise ({method}; per-row "
        f"|z| ≥ {result.per_row_z():.2f} at Bonferroni's level): {result.flagged_count()} "
        f"flagged, {result.missing_count()} missing"
    )
    if markdown:
        Path(markdown).write_text(to_markdown(result, a, b), encoding="utf-8")
        console.print(f"markdown: {markdown}")
    failed = []
    if numbers and (result.flagged_count() or result.missing_count()):
        failed.append("numbers moved beyond their noise or rows are missing")
    if slower is not None and result.slower(slower):
        names = ", ".join(f.name for f in result.slower(slower))
        failed.append(f"slower than {slower:g}× A: {names}")
    if failed:
        typer.echo(f"rfbench compare: {'; '.join(failed)}", err=True)
        raise typer.Exit(1)
