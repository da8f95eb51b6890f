"""The ``rfbench`` command line (docs/architecture.md#cli): thin — parse, validate, call.

``list`` and ``data`` are fixed Typer sub-apps; one subcommand per registered experiment is
generated from its parameters (rfbench.cli.experiments), plus ``run`` and ``reproduce``.
"""

from __future__ import annotations

import typer

from rfbench.cli import data, listing
from rfbench.cli.experiments import add_config_commands, add_experiment_command
from rfbench.cli.figures import figures
from rfbench.cli.report import report
from rfbench.cli.site import site
from rfbench.experiments import list_experiments

app = typer.Typer(
    name="rfbench",
    help="Benchmarks of random-feature kernel estimators (HRF, SimRF, DERF, CSE, Spectraformer).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(listing.app, name="list")
app.add_typer(data.app, name="data")
for _experiment in list_experiments():
    add_experiment_command(app, _experiment)
add_config_commands(app)
app.command("figures")(figures)
app.command("report")(report)
app.command("site")(site)


def main() -> None:  # pragma: no cover - console entry
    app(prog_name="rfbench")
