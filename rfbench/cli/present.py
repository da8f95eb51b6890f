"""The commands that read results and never compute: ``rfbench figures`` (every figure from the
parquet files), ``rfbench report`` (REPORT.md, the papers' numbers and claims vs ours) and
``rfbench site`` (a static HTML site that works from file://), with what they say about the
results folder they read; and ``rfbench compare A B``: did the numbers move beyond their noise, did
anything get slower?

``compare`` is thin: parse, call :func:`rfbench.present.compare.compare.compare`, print and exit.
Exit status: 0, or 1 when a ``--fail-on`` condition holds (CI), 2 for a user error (one line,
:mod:`rfbench.cli.errors`): among them runs of different configs without ``--across-configs``, a
damaged or oversized result file, and a ``--markdown`` path that cannot be a file (checked before
any work).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from rfbench.cli.errors import handle_errors
from rfbench.cli.show import console, print_frame, print_table
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
    rows = []
    for o in outcomes:
        status = escape(o.problem or ", ".join(p.name for p in o.paths))
        if o.missing and not o.problem:
            status += f" [yellow](without {', '.join(o.missing)}: not in the results)[/yellow]"
        if o.nonfinite:
            status += f" [yellow]({o.nonfinite} row(s) of infinite value left out)[/yellow]"
        rows.append((o.id, f"[red]{status}[/red]" if o.problem else status))
    print_table(escape(f"figures from {results} -> {out_dir}"), ("figure", "status"), rows)
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
    bug = next((o.error for o in outcomes if o.error is not None), None)
    if bug is not None:  # exit 1 naming the log, once every other figure is drawn
        raise bug
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
    rows = [
        (verdict, str(numbers.get(verdict, "")), str(claims.get(verdict, "")))
        for verdict in dict.fromkeys([*NUMBER_VERDICTS, *CLAIM_VERDICTS])
    ]
    print_table(
        escape(f"report on {results}"),
        ("verdict", "numbers", "claims"),
        rows,
        right={"numbers", "claims"},
    )
    surprises = rep.surprises()
    if surprises:
        console.print(f"{len(surprises)} claim(s) contradict their expectation (⚠ in the report)")
    console.print(escape(f"report: {path}"))
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
    console.print(escape(f"{len(pages)} pages -> {out_dir / 'index.html'}"))


def markdown_target(markdown: str) -> Path | None:
    """The file ``--markdown`` names (None if not given), refused before any work if it is a
    folder, lies under a file, or is a link or a file rfbench did not write
    (:func:`rfbench.present.outputs.check_markdown`: a name not ending in .md too)."""
    from rfbench.present.outputs import check_markdown

    if not markdown:
        return None
    path = Path(markdown)
    if path.is_dir() and not path.is_symlink():
        raise UserError(f"--markdown {markdown} is a folder; give a file name, e.g. "
                        f"{path / 'compare.md'}")  # fmt: skip
    check_markdown(path, "--markdown")  # a path under a file too (outputs.check_folder)
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
    rows: int = typer.Option(
        20, min=0, help="Shared rows shown in the terminal, largest |z| first."
    ),
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
            console.print(escape(f"only in {side}: {', '.join(names)}"))
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
    console.print(escape(output.summary_line(result)))
    if target is not None:
        text = output.markdown(result, a, b)
        try:
            atomic_write(target, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        except OSError as exc:
            raise UserError(f"cannot write --markdown {target}: {exc.strerror or exc}") from None
        console.print(escape(f"markdown: {target}"))
    failed = gate_failures(result, numbers, slower)
    if failed:
        typer.echo(f"rfbench compare: {'; '.join(failed)}", err=True)
        raise typer.Exit(1)
