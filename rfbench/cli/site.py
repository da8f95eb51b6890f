"""``rfbench site``: a static HTML site of a results folder (works from file://)."""

from __future__ import annotations

from pathlib import Path

import typer

from rfbench.cli.errors import handle_errors
from rfbench.cli.folders import RESULTS, checked_results
from rfbench.cli.show import console


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
