"""The command groups of what the suite knows and keeps: ``rfbench list
estimators|weights|datasets|experiments|figures`` (rich tables), ``rfbench data fetch NAME|all``
(download the data files and verify their sha256) and ``rfbench cache info|clear [FOLDER ...]``
(the job caches under results folders).

A job file is *current* if it was written by the code now installed (same rfbench source digest,
numpy and scipy versions); the others are *stale*: no run of this code reads them again.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import typer

from rfbench.cli.errors import handle_errors
from rfbench.cli.show import print_table
from rfbench.compute.checks import UserError

#: click's help layout, as the top-level app (rich boxed its panels and wrapped the help's
#: source lines where they broke, not into paragraphs)
_LAYOUT = {"no_args_is_help": True, "rich_markup_mode": None}
list_app = typer.Typer(help="List estimators, weights, datasets, ...", **_LAYOUT)
data_app = typer.Typer(help="Download and verify data sets.", **_LAYOUT)
cache_app = typer.Typer(help="Show or remove the job caches of results folders.", **_LAYOUT)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


@list_app.command("estimators")
def estimators() -> None:
    """Every estimator name with its kernels, source paper, unbiasedness and theory."""
    from rfbench.compute.features import theory
    from rfbench.compute.features.registry import list_estimators

    rows = [
        (
            info.name,
            ", ".join(info.kernels),
            info.paper,
            _yes(info.estimator.unbiased),
            _yes(info.theory_name is not None and theory.has_theory(info.theory_name)),
        )
        for info in list_estimators()
    ]
    columns = ("name", "kernels", "paper", "unbiased", "theory")
    print_table(
        "rfbench estimators (component@weights, hybrids, aliases)", columns, rows, no_wrap={"name"}
    )


@list_app.command("weights")
def weights() -> None:
    """Every coupling of the projections."""
    from rfbench.compute.features.registry import weights_samplers

    rows = [
        (
            name,
            cls.description,
            cls.paper,
            _yes(cls.marginally_gaussian),
            _yes(cls.rotation_invariant),
        )
        for name, cls in weights_samplers().items()
    ]
    columns = ("name", "description", "paper", "rows N(0, I)", "rotation invariant")
    print_table("rfbench weights (couplings of the projections)", columns, rows)


@list_app.command("datasets")
def datasets() -> None:
    """Every data set: size after preprocessing, classes, download, source, licence, local copy."""
    from rfbench.compute.datasets import DATASETS, data_root, local_status

    rows = [
        (
            info.name,
            info.shape,
            info.classes,
            f"{info.download_bytes / 1e6:.2f} MB" if info.download_bytes else "-",
            info.source,
            info.licence,
            local_status(info.name),
        )
        for info in DATASETS.values()
    ]
    columns = ("name", "rows x features", "classes", "download", "source", "licence", "local")
    title = f"rfbench data sets (data folder: {data_root()})"
    print_table(title, columns, rows, no_wrap={"name", "rows x features"})


@list_app.command("experiments")
def experiments() -> None:
    """Every experiment with its description."""
    from rfbench.cli.app import experiment_texts

    rows = [(name, description) for name, (_, description) in experiment_texts().items()]
    title = "rfbench experiments (rfbench <name> --help)"
    print_table(title, ("name", "description"), rows, no_wrap={"name"})


@list_app.command("figures")
def figures() -> None:
    """Every figure id, the results it reads and what it shows."""
    from rfbench.present.plots.registry import list_figures

    rows = [(spec.id, ", ".join(spec.needs), spec.title) for spec in list_figures()]
    title = "rfbench figures (rfbench figures; results/figures/<id>.png|pdf)"
    print_table(title, ("figure", "reads results", "title"), rows, no_wrap={"figure"})


@data_app.command("fetch")
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
    from rfbench.compute.datasets import DATASETS, DataError, data_root
    from rfbench.compute.datasets import fetch as fetch_files
    from rfbench.compute.datasets.registry import get
    from rfbench.compute.experiments.base import ConfigError

    if url is not None and urlsplit(url).scheme.lower() not in ("http", "https"):
        local = "a local copy: set RFBENCH_DATA to its folder"
        raise ConfigError.bad_value("url", url, f"an http:// or https:// mirror; {local}")
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


#: where runs write: everyday runs to runs/, ``make reproduce`` to results/
DEFAULT_FOLDERS = ("runs", "results")
FOLDERS = typer.Argument(
    None, help="Results folders to search for caches (default: runs and results, those that exist)."
)


def _caches(folders: list[str] | None) -> list[Path]:
    """rfbench's job caches under the folders; look-alikes are named on stderr and left alone."""
    from rfbench.compute.runner.cache import find_caches

    roots = [Path(f) for f in folders or [f for f in DEFAULT_FOLDERS if Path(f).is_dir()]]
    missing = [r for r in roots if not r.is_dir()]
    if missing and missing[0].exists():
        raise UserError(f"{str(missing[0])!r} is a file; give the results folders that hold caches")
    if missing:
        raise UserError(f"folder {str(missing[0])!r} does not exist")
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


@cache_app.command("info")
@handle_errors
def info(folders: list[str] | None = FOLDERS) -> None:
    """Per output folder: caches, job files, size, and how many are current or stale."""
    from rfbench.compute.runner.cache import cache_usage
    from rfbench.compute.runner.digest import code_tag, environment

    env = environment()
    title = (
        f"job caches (current code {code_tag()}: rfbench source sha256 "
        f"{env['code'][:12]}, numpy {env['numpy']}, scipy {env['scipy']})"
    )
    rows = []
    for root in _caches(folders):
        u = cache_usage(root)
        _report_foreign(u.foreign)
        rows.append((str(u.folder), *map(str, (u.files, _size(u.size), u.current, u.stale))))
    columns = ("folder", "job files", "size", "current", "stale")
    print_table(title, columns, rows, right=columns[1:])


@cache_app.command("clear")
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


def _whole_summaries(*groups: typer.Typer) -> None:
    """Each command's summary in its group's help is its docstring's first paragraph, whole
    (click cut it to fit one line, ending in '...')."""
    for group in groups:
        for command in group.registered_commands:
            doc = (command.callback.__doc__ or "").strip() if command.callback else ""
            command.short_help = command.short_help or " ".join(doc.split("\n\n")[0].split())


_whole_summaries(list_app, data_app, cache_app)
