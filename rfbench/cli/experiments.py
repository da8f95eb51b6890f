"""One subcommand per registered experiment, built from its ``defaults`` (docs/architecture.md#cli).

Each parameter of an experiment becomes an option named after it (``r`` -> ``--r``,
``hybrid_m`` -> ``--hybrid-m``); list parameters take comma-separated values. Only the options a
user gives override the experiment's defaults (or the chosen ``--profile``). The commands are
ordinary Typer commands whose signatures are synthesised from the parameters.
"""

from __future__ import annotations

import inspect
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from rfbench.cli.errors import handle_errors
from rfbench.cli.show import print_frame
from rfbench.experiments import ConfigError, Experiment

BACKENDS = ("serial", "processes", "dask")
PROFILES = ("quick", "paper")


def _option(name: str, kind: Any, default: Any, help_text: str) -> inspect.Parameter:
    flag = "--" + name.replace("_", "-")
    annotation = Annotated[kind, typer.Option(flag, help=help_text)]
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


RUN_OPTIONS: list[inspect.Parameter] = [
    _option("seed", int, 0, "Root seed."),
    _option("out", str | None, None, "Output file (default: results/<experiment>/<name>.parquet)."),
    _option(
        "profile",
        str | None,
        None,
        "quick (seconds, same code path) or paper (the papers' settings).",
    ),
    _option("workers", int | None, None, "Worker processes (default: cores)."),
    _option("backend", str, "processes", "serial, processes or dask."),
    _option("scheduler", str | None, None, "Dask scheduler address (with --backend dask)."),
    _option("force", bool, False, "Ignore the job cache and recompute."),
    _option("quiet", bool, False, "No progress bar and no summary table."),
]
RUN_KEYS = tuple(p.name for p in RUN_OPTIONS)


def parse_value(key: str, text: str, default: Any) -> Any:
    """A command-line string as the type of the parameter's default (lists: comma-separated)."""
    if isinstance(default, list | tuple):
        kind = type(default[0]) if default else str
        if kind is int and any(isinstance(v, float) for v in default):
            kind = float
        return [_scalar(key, part.strip(), kind) for part in text.split(",") if part.strip()]
    return _scalar(key, text, type(default) if default is not None else str)


def _scalar(key: str, text: str, kind: type) -> Any:
    if kind is bool:
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
    elif kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    else:
        return text
    raise ConfigError(
        f"invalid value for '--{key.replace('_', '-')}': {text!r} (expected {kind.__name__})"
    )


def check_run_options(options: Mapping[str, Any]) -> None:
    if options["profile"] not in (None, *PROFILES):
        raise ConfigError(
            f"invalid value for '--profile': {options['profile']!r} (allowed: quick, paper)"
        )
    if options["backend"] not in BACKENDS:
        raise ConfigError(
            f"invalid value for '--backend': {options['backend']!r} "
            f"(allowed: {', '.join(BACKENDS)})"
        )


def execute(
    experiment: Experiment,
    config: Mapping[str, Any],
    options: Mapping[str, Any],
    title: str | None = None,
) -> Path:
    """Run one resolved config, then print its headline table and the output path."""
    from rfbench.results import load_results
    from rfbench.runner import run

    path = run(
        experiment,
        config,
        seed=options["seed"],
        out=options.get("out"),
        workers=options.get("workers"),
        backend=options["backend"],
        force=options["force"],
        quiet=options["quiet"],
        command_line=shlex.join(["rfbench", *sys.argv[1:]]),
        scheduler=options.get("scheduler"),
    )
    if not options["quiet"]:
        print_frame(experiment.summary(load_results(path)), title or config["name"])
        typer.echo(f"results: {path}")
    return path


def _with_signature(
    fn: Callable[..., None], params: list[inspect.Parameter]
) -> Callable[..., None]:
    fn.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return fn


def add_experiment_command(app: typer.Typer, experiment: Experiment) -> None:
    """``rfbench <experiment> [--param value ...] [run options]``."""
    defaults = dict(experiment.defaults)

    @handle_errors
    def command(**given: Any) -> None:
        options = {k: given.pop(k) for k in RUN_KEYS}
        check_run_options(options)
        params = {k: parse_value(k, v, defaults[k]) for k, v in given.items() if v is not None}
        execute(experiment, experiment.resolve_config(params, options["profile"]), options)

    params = []
    for key, default in defaults.items():
        shown = default if not isinstance(default, list | tuple) else ",".join(map(str, default))
        help_text = f"{experiment.help.get(key, '')} (default: {shown})".strip()
        params.append(_option(key, str | None, None, help_text))
    name = experiment.name
    summary = experiment.description.split(". ")[0]
    app.command(name, help=experiment.description, short_help=summary)(
        _with_signature(command, params + RUN_OPTIONS)
    )


def config_files(root: Path | None = None) -> list[Path]:
    """Every config file under ``configs/`` (the working directory's, else the checkout's)."""
    folders = [root] if root else [Path.cwd() / "configs", Path(__file__).parents[2] / "configs"]
    for folder in folders:
        if folder.is_dir():
            return sorted(folder.rglob("*.toml"))
    return []


def add_config_commands(app: typer.Typer) -> None:
    """``rfbench run CONFIG.toml`` and ``rfbench reproduce``."""
    from rfbench.runner import resolve_file

    @handle_errors
    def run_config(config: str, **options: Any) -> None:
        check_run_options(options)
        if not Path(config).is_file():
            raise ConfigError(f"config file {config!r} does not exist")
        experiment, resolved = resolve_file(config, options["profile"])
        execute(experiment, resolved, options)

    config_arg = inspect.Parameter(
        "config",
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        annotation=Annotated[str, typer.Argument(help="A TOML config file (see configs/).")],
    )
    app.command("run", help="Run any experiment from a TOML config file.")(
        _with_signature(run_config, [config_arg] + RUN_OPTIONS)
    )

    @handle_errors
    def reproduce(configs: str | None = None, out_dir: str = "results", **options: Any) -> None:
        check_run_options(options)
        files = config_files(Path(configs) if configs else None)
        if not files:
            raise ConfigError("no config files found (looked for ./configs/**/*.toml)")
        profile = options["profile"] or "quick"
        for path in files:
            experiment, resolved = resolve_file(path, profile)
            out = Path(out_dir) / experiment.name / f"{resolved['name']}.parquet"
            title = f"{path.parent.name}/{path.name} ({profile})"
            execute(experiment, resolved, {**options, "out": out, "profile": profile}, title)

    extra = [
        _option("configs", str | None, None, "Config folder (default: ./configs)."),
        _option("out_dir", str, "results", "Results root: <out-dir>/<experiment>/<name>.parquet."),
    ]
    shared = [p for p in RUN_OPTIONS if p.name != "out"]
    app.command("reproduce", help="Run every config in configs/ (default profile: quick).")(
        _with_signature(reproduce, extra + shared)
    )
