"""``rfbench figures``: every figure from the parquet files in results/ (never computes)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from rfbench.cli.errors import handle_errors
from rfbench.cli.folders import RESULTS, checked_results
from rfbench.cli.show import console
from rfbench.compute.checks import UserError


@handle_errors
def figures(
    results: str = RESULTS,
    out: str = typer.Option("", help="Figure folder (default: <results>/figures)."),
    only: str = typer.Option("", help="Comma-separated figure ids (default: all)."),
    strict: bool = typer.Option(False, help="Exit 1 if any figure could not be drawn (CI)."),
) -> None:
    """Regenerate every figure (PNG and PDF) from the results; say what could not be drawn."""
    from rfbench.compute.skipped import skipped_fixes, skipped_names
    from rfbench.present.plots.draw import draw_all
    from rfbench.present.plots.registry import list_figures

    known = {spec.id for spec in list_figures()}
    wanted = [f.strip() for f in only.split(",") if f.strip()]
    unknown = sorted(set(wanted) - known)
    if unknown:
        raise UserError(f"unknown figure id(s) {', '.join(unknown)}; see `rfbench list figures`")
    folder = checked_results(results)
    out_dir = Path(out) if out else folder / "figures"
    outcomes = draw_all(folder, out_dir, wanted)
    table = Table(title=f"figures from {results} -> {out_dir}")
    for col in ("figure", "status"):
        table.add_column(col)
    for o in outcomes:
        status = o.problem or ", ".join(p.name for p in o.paths)
        if o.missing and not o.problem:
            status += f" [yellow](without {', '.join(o.missing)}: not in the results)[/yellow]"
        table.add_row(o.id, f"[red]{status}[/red]" if o.problem else status)
    console.print(table)
    missing_data = skipped_names(folder)
    needs = {spec.id: spec.needs for spec in list_figures()}
    lacking = {o.id: needs[o.id] if o.problem else o.missing for o in outcomes}
    offline = {
        o.id: sorted({missing_data[n] for n in lacking[o.id] if n in missing_data})
        for o in outcomes
        if any(n in missing_data for n in lacking[o.id])
    }
    failed = [o for o in outcomes if o.problem and o.id not in offline]
    if offline:
        sets = sorted({d for ds in offline.values() for d in ds})
        fixes = skipped_fixes(folder)
        commands = " && ".join(dict.fromkeys(fixes.get(d, f"rfbench data fetch {d}") for d in sets))
        console.print(
            f"{len(offline)} figure(s) not drawn (or drawn in part) because reproduce skipped "
            "their data "
            f"({', '.join(sets)}): get it with `{commands}` and run again"
        )
    drawn = sum(1 for o in outcomes if not o.problem)
    console.print(f"{drawn} of {len(outcomes)} figures drawn")
    if strict and failed:
        raise typer.Exit(1)
