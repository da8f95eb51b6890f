"""The commands that read a results folder and never compute: ``rfbench figures`` (every figure
from the parquet files), ``rfbench report`` (REPORT.md, the papers' numbers and claims vs ours) and
``rfbench site`` (a static HTML site that works from file://); and what they say about the results
folder they read."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from rfbench.cli.errors import handle_errors
from rfbench.cli.show import console
from rfbench.compute.checks import UserError

#: the ``--results`` option of ``figures``, ``report`` and ``site``
RESULTS = typer.Option("results", help="Results folder: <results>/<experiment>/*.parquet.")


def checked_results(results: str) -> Path:
    """The results folder, refused if absent or holding an unreadable result file; a mix of
    profiles is warned about (:func:`warn_mixed_profiles`)."""
    from rfbench.compute.results import check_readable

    if not Path(results).is_dir():
        raise UserError(f"results folder {results!r} does not exist")
    check_readable(results)
    warn_mixed_profiles(results)
    return Path(results)


def warn_mixed_profiles(folder: str | Path) -> dict[str, list[Path]]:
    """Say loudly (stderr) when a results folder mixes profiles; return the files per profile.

    A quick run's numbers beside paper-profile ones would silently change figures and verdicts:
    every file's profile is named so the reader knows what was mixed.
    """
    from rfbench.compute.results import load_provenance, result_paths

    by_profile: dict[str, list[Path]] = {}
    for path in result_paths(folder):
        try:
            profile = load_provenance(path).get("config", {}).get("profile") or "default"
        except ValueError:
            continue  # unreadable files are reported by the commands themselves
        by_profile.setdefault(str(profile), []).append(path)
    if len(by_profile) > 1:
        lines = [
            f"rfbench: warning: {folder} mixes result files of {len(by_profile)} profiles "
            "(figures and verdicts would mix their numbers):"
        ]
        for profile, paths in sorted(by_profile.items()):
            names = [p.relative_to(folder).with_suffix("").as_posix() for p in paths]
            lines.append(f"  {profile}: {len(paths)} file(s) ({_some(names)})")
        typer.secho("\n".join(lines), err=True, fg="yellow")
    return by_profile


#: how many characters of file names a line of the warning shows before "and N more"
NAMES_WIDTH = 60


def _some(names: list[str]) -> str:
    """As many of ``names`` as fit in :data:`NAMES_WIDTH` characters, then ``and N more``."""
    shown: list[str] = []
    for name in names:
        if shown and len(", ".join([*shown, name])) > NAMES_WIDTH:
            return f"{', '.join(shown)} and {len(names) - len(shown)} more"
        shown.append(name)
    return ", ".join(shown)


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

    needs = {spec.id: spec.needs for spec in list_figures()}
    wanted = [f.strip() for f in only.split(",") if f.strip()]
    unknown = sorted(set(wanted) - set(needs))
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


@handle_errors
def site(
    results: str = RESULTS,
    out: str = typer.Option("", help="Site folder (default: <results>/site)."),
) -> None:
    """Write a browsable HTML site of the results: figures, charts, numbers, verdicts."""
    from rfbench.present.site import build_site

    folder = checked_results(results)
    out_dir = Path(out) if out else folder / "site"
    pages = build_site(results, out_dir)
    console.print(f"{len(pages)} pages -> {out_dir / 'index.html'}")
