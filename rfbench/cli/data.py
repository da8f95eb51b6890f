"""``rfbench data fetch NAME|all`` (filled in with the data loaders)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Download and verify data sets.", no_args_is_help=True)
