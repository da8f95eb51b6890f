"""``rfbench data fetch NAME|all``: download the data files and verify their sha256."""

from __future__ import annotations

import typer

from rfbench.cli.errors import UserError, handle_errors
from rfbench.compute.datasets import DataError

app = typer.Typer(help="Download and verify data sets.", no_args_is_help=True)


@app.command("fetch")
@handle_errors
def fetch(
    name: str = typer.Argument(..., help="A data set name (see `rfbench list datasets`) or all."),
    url: str = typer.Option(
        None,
        "--url",
        help="Mirror laid out like the data folder (overrides RFBENCH_DATA_URL and the registry).",
    ),
) -> None:
    """Download NAME (or all) into the data folder and verify every file's sha256.

    The data folder is $RFBENCH_DATA, else the per-user cache. Files already there are verified;
    corrupt ones are downloaded again. Built-in sets (wine, digits) need nothing. With `all`,
    every data set is tried; the command fails at the end if any could not be fetched.
    """
    from rfbench.compute.datasets import DATASETS, data_root
    from rfbench.compute.datasets import fetch as fetch_files
    from rfbench.compute.datasets.registry import get

    names = list(DATASETS) if name == "all" else [get(name).name]
    failed = []
    for one in names:
        try:
            results = fetch_files(one, base_url=url)
        except DataError as exc:
            if name != "all":
                raise
            failed.append(one)
            typer.echo(f"{'FAILED':<12} {one:<9} {exc}", err=True)
            continue
        for r in results:
            typer.echo(f"{r.status:<12} {r.dataset:<9} {r.path}")
        if not results:
            typer.echo(f"{'built-in':<12} {one:<9} (scikit-learn, nothing to download)")
    typer.echo(f"data folder: {data_root()}")
    if failed:
        raise UserError(f"could not fetch {', '.join(failed)} (see the lines above)")
