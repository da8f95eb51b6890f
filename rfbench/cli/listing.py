"""``rfbench list estimators|weights|datasets``: what the suite knows, as rich tables."""

from __future__ import annotations

import typer
from rich.table import Table

from rfbench.cli.show import console

app = typer.Typer(help="List estimators, weights, datasets, ...", no_args_is_help=True)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


@app.command("estimators")
def estimators() -> None:
    """Every estimator name with its kernels, source paper, unbiasedness and theory."""
    from rfbench.compute.features import theory
    from rfbench.compute.features.registry import list_estimators

    table = Table(title="rfbench estimators (component@weights, hybrids, aliases)")
    for col in ("name", "kernels", "paper", "unbiased", "theory"):
        table.add_column(col, no_wrap=col == "name")
    for info in list_estimators():
        table.add_row(
            info.name,
            ", ".join(info.kernels),
            info.paper,
            _yes(info.estimator.unbiased),
            _yes(info.theory_name is not None and theory.has_theory(info.theory_name)),
        )
    console.print(table)


@app.command("weights")
def weights() -> None:
    """Every coupling of the projections."""
    from rfbench.compute.features.registry import weights_samplers

    table = Table(title="rfbench weights (couplings of the projections)")
    for col in ("name", "description", "paper", "rows N(0, I)", "rotation invariant"):
        table.add_column(col)
    for name, cls in weights_samplers().items():
        table.add_row(
            name,
            cls.description,
            cls.paper,
            _yes(cls.marginally_gaussian),
            _yes(cls.rotation_invariant),
        )
    console.print(table)


@app.command("datasets")
def datasets() -> None:
    """Every data set: size after preprocessing, classes, download, source, licence, local copy."""
    from rfbench.compute.datasets import DATASETS, data_root, local_status

    table = Table(title=f"rfbench data sets (data folder: {data_root()})")
    for col in ("name", "rows x features", "classes", "download", "source", "licence", "local"):
        table.add_column(col, no_wrap=col in ("name", "rows x features"))
    for info in DATASETS.values():
        size = f"{info.download_bytes / 1e6:.2f} MB" if info.download_bytes else "-"
        table.add_row(
            info.name,
            info.shape,
            info.classes,
            size,
            info.source,
            info.licence,
            local_status(info.name),
        )
    console.print(table)


@app.command("experiments")
def experiments() -> None:
    """Every experiment with its description."""
    from rfbench.cli.lazy import experiment_texts

    table = Table(title="rfbench experiments (rfbench <name> --help)")
    table.add_column("name", no_wrap=True)
    table.add_column("description")
    for name, (_, description) in experiment_texts().items():
        table.add_row(name, description)
    console.print(table)


@app.command("figures")
def figures() -> None:
    """Every figure id, the results it reads and what it shows."""
    from rfbench.present.plots.registry import list_figures

    table = Table(title="rfbench figures (rfbench figures; results/figures/<id>.png|pdf)")
    for col in ("figure", "reads results", "title"):
        table.add_column(col, no_wrap=col == "figure")
    for spec in list_figures():
        table.add_row(spec.id, ", ".join(spec.needs), spec.title)
    console.print(table)
