"""The ``rfbench`` command line (DESIGN §4): thin — parse, validate, call."""

from __future__ import annotations

import typer

from rfbench.cli import data, listing

app = typer.Typer(
    name="rfbench",
    help="Benchmarks of random-feature kernel estimators (HRF, SimRF, DERF, CSE, Spectraformer).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(listing.app, name="list")
app.add_typer(data.app, name="data")


def main() -> None:  # pragma: no cover - console entry
    app()
