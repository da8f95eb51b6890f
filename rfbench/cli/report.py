"""``rfbench report``: REPORT.md, the papers' numbers and claims vs ours (never computes)."""

from __future__ import annotations

import typer
from rich.table import Table

from rfbench.cli.errors import handle_errors
from rfbench.cli.folders import RESULTS, warn_mixed_profiles
from rfbench.cli.show import console
from rfbench.compute.checks import UserError


@handle_errors
def report(
    results: str = RESULTS,
    out: str = typer.Option("", help="Report file (default: <results>/REPORT.md)."),
    figures: str = typer.Option(
        "", help="Folder of drawn figures to link (default: <results>/figures)."
    ),
    strict: bool = typer.Option(
        False,
        help="Exit 1 if a number differs or a claim contradicts its expectation, 2 if a result "
        "file is unreadable (CI).",
    ),
) -> None:
    """Compare the papers' published numbers and claims with the results; write REPORT.md."""
    from rfbench.present.report import CLAIM_VERDICTS, NUMBER_VERDICTS, write_report
    from rfbench.present.report.verdicts import DIFFERS

    path, rep = write_report(results, out or None, figures or None)
    warn_mixed_profiles(results)
    for problem in rep.problems:
        typer.echo(f"rfbench: warning: unreadable result file {problem}", err=True)
    if strict and rep.problems:
        raise UserError(f"unreadable result file {rep.problems[0]} (--strict)")
    numbers, claims = rep.number_counts(), rep.claim_counts()
    table = Table(title=f"report on {results}")
    for col in ("verdict", "numbers", "claims"):
        table.add_column(col, justify="left" if col == "verdict" else "right")
    for verdict in dict.fromkeys([*NUMBER_VERDICTS, *CLAIM_VERDICTS]):
        table.add_row(verdict, str(numbers.get(verdict, "")), str(claims.get(verdict, "")))
    console.print(table)
    surprises = rep.surprises()
    if surprises:
        console.print(f"{len(surprises)} claim(s) contradict their expectation (⚠ in the report)")
    console.print(f"report: {path}")
    if strict and (numbers.get(DIFFERS) or surprises):
        raise typer.Exit(1)
