"""``rfbench cache info|clear [FOLDER ...]``: the job caches under results folders.

A job file is *current* if it was written by the code now installed (same rfbench source digest,
numpy and scipy versions); the others are *stale*: no run of this code reads them again.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from rfbench.cli.errors import handle_errors
from rfbench.cli.show import console
from rfbench.compute.checks import UserError

app = typer.Typer(help="Show or remove the job caches of results folders.", no_args_is_help=True)

#: where runs write: everyday runs to runs/, ``make reproduce`` to results/
DEFAULT_FOLDERS = ("runs", "results")
FOLDERS = typer.Argument(
    None, help="Results folders to search for caches (default: runs and results, those that exist)."
)


def _caches(folders: list[str] | None) -> list[Path]:
    """rfbench's job caches under the folders; look-alikes are named on stderr and left alone."""
    from rfbench.compute.runner.cache import find_caches

    roots = [Path(f) for f in folders or [f for f in DEFAULT_FOLDERS if Path(f).is_dir()]]
    missing = [str(r) for r in roots if not r.is_dir()]
    if missing:
        raise UserError(f"folder {missing[0]!r} does not exist")
    caches: set[Path] = set()
    for root in roots:
        found, skipped = find_caches(root)
        caches.update(found)
        for path in skipped:
            typer.echo(f"skipped {path}: not an rfbench job cache (left alone)", err=True)
    return sorted(caches)


def _report_foreign(paths: tuple[Path, ...]) -> None:
    for path in paths:
        typer.echo(f"skipped {path}: not written by rfbench (left alone)", err=True)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


@app.command("info")
@handle_errors
def info(folders: list[str] | None = FOLDERS) -> None:
    """Per output folder: caches, job files, size, and how many are current or stale."""
    from rfbench.compute.runner.cache import cache_usage
    from rfbench.compute.runner.digest import code_tag, environment

    env = environment()
    table = Table(
        title=f"job caches (current code {code_tag()}: rfbench source sha256 "
        f"{env['code'][:12]}, numpy {env['numpy']}, scipy {env['scipy']})"
    )
    for col in ("folder", "job files", "size", "current", "stale"):
        table.add_column(col, justify="left" if col == "folder" else "right")
    for root in _caches(folders):
        u = cache_usage(root)
        _report_foreign(u.foreign)
        row = (u.files, _size(u.size), u.current, u.stale)
        table.add_row(str(u.folder), *map(str, row))
    console.print(table)


@app.command("clear")
@handle_errors
def clear(
    folders: list[str] | None = FOLDERS,
    stale_only: bool = typer.Option(
        False, "--stale-only", help="Keep the job files of the current code."
    ),
) -> None:
    """Remove rfbench's job files (or only the stale ones) from the caches under the folders.

    Only folders named ``.rfbench-cache`` that carry rfbench's marker are touched, and in them only
    the files rfbench wrote; everything else is reported and left alone. A cache a running rfbench
    holds is skipped (said on stderr): clear it again when that run has ended.
    """
    from rfbench.compute.runner.cache import CacheInUse, cache_usage, clear_cache

    files = size = 0
    for root in _caches(folders):
        _report_foreign(cache_usage(root).foreign)
        try:
            removed, freed = clear_cache(root, stale_only)
        except CacheInUse:
            typer.echo(f"skipped {root}: in use by a running rfbench (clear it after the run)",
                       err=True)  # fmt: skip
            continue
        except ValueError as exc:  # its lock file a symbolic link: refused, never followed
            typer.echo(f"skipped {root}: {exc}", err=True)
            continue
        files += removed
        size += freed
    typer.echo(f"removed {files} job file(s), {_size(size)}")
