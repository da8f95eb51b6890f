"""``rfbench site``: a static HTML site of a results folder (works from file://)."""

from __future__ import annotations

from pathlib import Path

import typer

from rfbench.cli.errors import handle_errors
from rfbench.cli.folders import warn_mixed_profiles
from rfbench.cli.show import console
from rfbench.compute.errors import UserError


@handle_errors
def site(
    results: str = typer.Option(
        "results", help="Results folder: <results>/<experiment>/*.parquet."
    ),
    out: str = typer.Option("", help="Site folder (default: <results>/site)."),
) -> None:
    """Write a browsable HTML site of the results: figures, charts, numbers, verdicts."""
    from rfbench.compute.results import check_readable
    from rfbench.present.site import build_site

    if not Path(results).is_dir():
        raise UserError(f"results folder {results!r} does not exist")
    out_dir = Path(out) if out else Path(results) / "site"
    check_readable(results)
    warn_mixed_profiles(results)
    pages = build_site(results, out_dir)
    console.print(f"{len(pages)} pages -> {out_dir / 'index.html'}")
