"""One subcommand per registered experiment, built from its parameter model
(docs/architecture.md#cli; the options: rfbench.cli.params; ``--data``/``--target``:
rfbench.cli.user_data), and ``rfbench run`` and ``reproduce``. A command resolves its config once.
"""

from __future__ import annotations

import contextlib
import inspect
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rfbench.cli import user_data
from rfbench.cli.errors import handle_errors
from rfbench.cli.params import parameter_options, parse_value, renamed_options
from rfbench.cli.show import print_frame
from rfbench.compute.experiments.base import PROFILES, ConfigError, Experiment
from rfbench.compute.runner.backends import BACKENDS

if TYPE_CHECKING:
    from rfbench.compute.runner.preflight import Plan

RUN_PANEL = "Run options"


def _run(default: Any, help_text: str, metavar: str | None = None, *decls: str) -> Any:
    """An option every run takes (its help panel: :data:`RUN_PANEL`); the flags ``decls`` of a
    boolean, whose default the help does not show."""
    return typer.Option(
        default,
        *decls,
        help=help_text,
        metavar=metavar,
        show_default=not decls,
        rich_help_panel=RUN_PANEL,
    )


def _run_options(
    *,
    seed: int = _run(0, "Root seed.", "INT"),
    out: str | None = _run(
        None, "Output file (default: runs/<experiment>/<name>.parquet).", "PATH"
    ),
    profile: str | None = _run(
        None, "quick (seconds, same code path) or paper (the papers' settings).", "quick|paper"
    ),
    workers: int | None = _run(None, "Worker processes (default: cores).", "INT"),
    backend: str = _run("processes", "serial, processes or dask.", "TEXT"),
    scheduler: str | None = _run(None, "Dask scheduler address (with --backend dask).", "ADDRESS"),
    max_memory: str | None = _run(
        None,
        "Memory budget of one job, e.g. 4G (default: half the available memory / workers).",
        "SIZE",
    ),
    force: bool = _run(
        False,
        "Ignore the job cache and recompute (reproduce: a job configs share, once).",
        None,
        "--force",
    ),
    replace: bool = _run(
        False, "Overwrite an output file written by another profile or config.", None, "--replace"
    ),
    quiet: bool = _run(False, "No progress bar and no summary table.", None, "--quiet"),
    plot: bool = _run(
        True, "Draw a figure of the result as <out>.png beside it.", None, "--plot/--no-plot"
    ),
) -> None:
    """The options every run takes, in their help's order (:data:`RUN_OPTIONS`)."""


RUN_OPTIONS = list(inspect.signature(_run_options, eval_str=True).parameters.values())
RUN_KEYS = tuple(p.name for p in RUN_OPTIONS)


def check_run_options(options: Mapping[str, Any]) -> None:
    """Refuse a bad profile, backend, seed or worker count (before ``reproduce`` checks every
    config); state ``--max-memory`` for the readers of user files (rfbench.compute.memlimits),
    which check a file before the config that names it is resolved."""
    from rfbench.compute.memlimits import set_requested
    from rfbench.compute.runner.memory import parse_size
    from rfbench.compute.runner.options import RunOptions

    set_requested(parse_size(options.get("max_memory")))
    if options["profile"] not in (None, *PROFILES):
        raise ConfigError.bad_value("--profile", options["profile"], ", ".join(PROFILES))
    if options["backend"] not in BACKENDS:
        raise ConfigError.bad_value("--backend", options["backend"], ", ".join(BACKENDS))
    keys = ("seed", "workers", "backend", "scheduler")
    RunOptions(**{k: options[k] for k in keys if k in options}).checked()


def plan_run(
    experiment: Experiment, config: Mapping[str, Any], options: Mapping[str, Any], option: str
) -> Plan:
    """Every check that can refuse the run, before its first job
    (:mod:`rfbench.compute.runner.preflight`); ``option`` is the command's output option, for the
    messages."""
    from rfbench.compute.runner.memory import parse_size
    from rfbench.compute.runner.options import RunOptions
    from rfbench.compute.runner.preflight import prepare

    given = {k: v for k, v in options.items() if k in RunOptions.__dataclass_fields__}
    fixed = {
        "command_line": shlex.join(["rfbench", *sys.argv[1:]]),
        "max_memory": parse_size(options.get("max_memory")),
        "output_option": option,
    }
    return prepare(experiment, config, RunOptions(**(given | fixed)))


def execute(
    experiment: Experiment,
    config: Mapping[str, Any],
    options: Mapping[str, Any],
    title: str | None = None,
    plan: Plan | None = None,
) -> Path:
    """Run one resolved config (its checked ``plan``, else checked now), then print its headline
    table and the output path."""
    from rfbench.compute.results import load_results
    from rfbench.compute.runner.core import execute_plan
    from rfbench.present.plots.generic import NotOurs, _check_ours

    plan = plan or plan_run(experiment, config, options, "--out")
    with plan:
        path = execute_plan(plan)
        if plan.replaced is not None:  # the replaced result's figure goes, unless not ours
            with contextlib.suppress(NotOurs):
                _check_ours(path.with_suffix(".png"))
                path.with_suffix(".png").unlink(missing_ok=True)
    results = load_results(path)
    if not options["quiet"]:
        say_cached(path)
        from rfbench.present.summaries import terminal_summary

        print_frame(terminal_summary(experiment.name, results), title or config["name"])
        typer.echo(f"results: {path}")
    if options.get("plot", True):
        figure = draw_figure_of(path)
        if figure is not None and not options["quiet"]:
            typer.echo(f"figure: {figure}")
    return path


def say_cached(path: Path) -> None:
    """One line when the run read jobs from the job cache (a rerun is served from it): how many,
    and that ``--force`` computes them again."""
    from rfbench.compute.results import load_provenance

    timing = load_provenance(path).get("timing", {})
    cached, computed = timing.get("jobs_cached", 0), timing.get("jobs_computed", 0)
    if cached:
        typer.echo(
            f"rfbench: {cached} of {cached + computed} job(s) read from the job cache "
            "(computed by an earlier run of the same code); --force computes them again",
            err=True,
        )


def draw_figure_of(path: Path) -> Path | None:
    """Draw the figure beside the result ``path``
    (:func:`~rfbench.present.plots.generic.draw_result`); a figure that cannot be drawn is one
    warning line naming it, never a failure of the run whose results are written (a bug in
    drawing also leaves its traceback in a log file)."""
    from rfbench.cli.errors import explain
    from rfbench.compute.runner.outputs import writing
    from rfbench.present.plots.generic import NotOurs, draw_result

    figure = path.with_suffix(".png")
    try:
        with writing(figure):
            return draw_result(path)
    except NotOurs as exc:
        typer.echo(f"rfbench: figure not drawn: {exc}", err=True)
    except Exception as exc:
        typer.echo(
            f"rfbench: warning: figure {figure} not drawn; the results are kept in {path}: "
            f"{explain(exc)}",
            err=True,
        )
    return None


def _with_options(fn: Callable[..., None], options: list[inspect.Parameter]) -> Callable[..., None]:
    """``fn`` as a command of its own parameters (``**options`` aside) and ``options``."""
    own = inspect.signature(fn, eval_str=True).parameters.values()
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [p for p in own if p.kind != p.VAR_KEYWORD] + options
    )
    return fn


def add_experiment_command(app: typer.Typer, experiment: Experiment) -> None:
    """``rfbench <experiment> [--param value ...] [--data PATH] [run options]``.

    The parameter options come from the experiment's parameter model; the command resolves its
    config once and the run uses it as resolved."""
    fields = experiment.parameters()
    old_names = experiment.params.renamed
    data_options = user_data.data_options(experiment)
    shown = [p for k, p in fields.items() if not (data_options and k == "data")]
    taken = {
        f for p in RUN_OPTIONS + data_options for d in p.default.param_decls for f in d.split("/")
    }

    @handle_errors
    def command(**given: Any) -> None:
        options = {k: given.pop(k) for k in RUN_KEYS}
        data = {k: given.pop(k) for k in user_data.KEYS if k in given}
        check_run_options(options)
        params = {
            k: parse_value(fields[old_names.get(k, k)], v)
            for k, v in given.items()
            if v is not None
        }
        params = user_data.apply(experiment, params, **data)
        execute(experiment, experiment.resolve_config(params, options["profile"]), options)

    params = parameter_options(shown, taken) + renamed_options(experiment.params, fields)
    app.command(
        experiment.name, help=experiment.description, short_help=experiment.short_description()
    )(_with_options(command, params + data_options + RUN_OPTIONS))


def config_files(root: Path | None = None) -> list[Path]:
    """Every config file under ``configs/`` (the working directory's, else the checkout's)."""
    folders = [root] if root else [Path.cwd() / "configs", Path(__file__).parents[2] / "configs"]
    return next((sorted(f.rglob("*.toml")) for f in folders if f.is_dir()), [])


def _config_name(path: Path) -> str:
    """A config file's ``name`` (its stem when it has none or cannot be read)."""
    import tomllib

    try:
        return str(tomllib.loads(path.read_text(encoding="utf-8")).get("name") or path.stem)
    except (OSError, ValueError, RecursionError):
        return path.stem


def data_unavailable(exc: BaseException):
    """The :class:`~rfbench.compute.datasets.errors.DataUnavailable` behind ``exc`` (its cause
    chain)."""
    from rfbench.compute.datasets.errors import DataUnavailable

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, DataUnavailable):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _plan_all(
    runs: list[tuple[Path, Experiment, Mapping[str, Any], Path]],
    options: Mapping[str, Any],
    stack: contextlib.ExitStack,
    skip: Callable[..., None],
) -> list[tuple[Path, Experiment, Mapping[str, Any], Plan]]:
    """Check every config before the first runs: a config whose data is not here is skipped, any
    other refusal stops the reproduction before its first job. Outputs of another profile or
    config are counted, and refused together (after any other problem)."""
    from rfbench.compute.runner.outputs import OutputClash

    plans = []
    clashes: list[OutputClash] = []
    for path, experiment, resolved, out in runs:
        try:
            plan = plan_run(experiment, resolved, {**options, "out": out}, "--out-dir")
        except OutputClash as exc:
            clashes.append(exc)
            continue
        except Exception as exc:
            skip(exc, path, resolved["name"])
            continue
        plans.append((path, experiment, resolved, stack.enter_context(plan)))
    if clashes:
        n = len(clashes) - 1
        more = f" ({n} more output{'s' if n > 1 else ''} likewise)" if n else ""
        raise ConfigError(f"{clashes[0]}{more}")
    return plans


def stop_overrides(path: str | Path, stop: str | None) -> dict[str, Any]:
    """``--stop`` of ``run`` and ``reproduce``: the stopping rule of every config whose experiment
    has one (docs/architecture.md#sequential-draws); {} without it or for other experiments."""
    from rfbench.compute.experiments import get_experiment
    from rfbench.compute.runner.config import read_config_file
    from rfbench.compute.sequential import STOP_RULES

    if stop is None:
        return {}
    if stop not in STOP_RULES:
        raise ConfigError.bad_value("stop", stop, " or ".join(STOP_RULES))
    experiment = get_experiment(read_config_file(path).experiment)
    return {"stop": stop} if "stop" in experiment.parameters() else {}


#: ``--stop`` of ``run`` and ``reproduce``
STOP = _run(
    None,
    "fixed or resolved: the stopping rule of every config whose experiment has one (default: "
    "the config's own; docs/architecture.md#sequential-draws).",
    "fixed|resolved",
)


@handle_errors
def run_config(
    config: str = typer.Argument(help="A TOML config file (see configs/)."),
    stop: str | None = STOP,
    **options: Any,
) -> None:
    """Run any experiment from a TOML config file."""
    from rfbench.compute.runner import resolve_file

    check_run_options(options)
    if not Path(config).exists():  # a folder: read_config_file says so
        raise ConfigError(f"config file {config!r} does not exist")
    experiment, resolved = resolve_file(config, options["profile"], stop_overrides(config, stop))
    execute(experiment, resolved, options)


@handle_errors
def reproduce(
    configs: str | None = _run(None, "Config folder (default: ./configs)."),
    out_dir: str | None = _run(
        None,
        "Results root: <out-dir>/<experiment>/<name>.parquet (default: runs/<profile>, so "
        "profiles never collide; the paper results: results).",
        "DIR",
    ),
    stop: str | None = STOP,
    **options: Any,
) -> None:
    """Run every config in configs/ (default profile: quick) into runs/<profile>/; every config
    is checked before the first job runs."""
    from rfbench.compute.runner import default_out, resolve_file
    from rfbench.compute.runner.outputs import SCRATCH_ROOT
    from rfbench.compute.skipped import record_skipped

    check_run_options(options)
    if configs and Path(configs).is_file():
        raise ConfigError(f"--configs {configs!r} is a file; give a folder of configs (one "
                          f"config runs with: rfbench run {configs})")  # fmt: skip
    if configs and not Path(configs).is_dir():
        raise ConfigError(f"config folder {configs!r} does not exist")
    files = config_files(Path(configs) if configs else None)
    if not files:
        where = configs.rstrip("/") if configs else "./configs"
        raise ConfigError(f"no config files found (looked for {where}/**/*.toml)")
    profile = options["profile"] or "quick"
    root = Path(out_dir) if out_dir else Path(SCRATCH_ROOT) / profile
    planned: dict[Path, Path] = {}
    fresh: set[Path] = set()  # jobs computed by this reproduction (reused even with --force)
    runs = []
    skipped: list[dict[str, str]] = []

    def skip(exc: Exception, path: Path, name: str, title: str | None = None) -> None:
        """Skip a config whose data or model is not here, in one short line (a direct run
        prints the data error in full); any other error stops the reproduction."""
        missing = data_unavailable(exc)
        if missing is None:
            raise exc
        title = title or f"{path.parent.name}/{path.name}"
        why = f"{missing.dataset} is not here (get it with: {missing.fix})"
        typer.secho(f"skipped {title}: {why}", err=True, fg="yellow")
        skipped.append({"config": str(path), "name": name, "dataset": missing.dataset,
                        "fix": missing.fix})  # fmt: skip

    for path in files:
        try:
            experiment, resolved = resolve_file(path, profile, stop_overrides(path, stop))
        except Exception as exc:
            skip(exc, path, _config_name(path))
            continue
        out = default_out(experiment.name, resolved["name"], root)
        if out in planned:
            raise ConfigError(
                f"configs {planned[out]} and {path} would both write {out} (same experiment "
                "and name): give one of them another name"
            )
        planned[out] = path
        runs.append((path, experiment, resolved, out))
    run_options = {**options, "profile": profile, "plot": False, "fresh": fresh}
    if not options["quiet"] and runs:
        typer.echo(f"checking {len(runs)} configs (data, memory, value ranges, outputs) "
                   "before the first job", err=True)  # fmt: skip
    with contextlib.ExitStack() as stack:
        plans = _plan_all(runs, run_options, stack, skip)
        for path, experiment, resolved, plan in plans:
            title = f"{path.parent.name}/{path.name} ({profile})"
            try:
                execute(experiment, resolved, {**run_options, "out": plan.out}, title, plan)
            except Exception as exc:
                skip(exc, path, resolved["name"], title)
    record_skipped(root, skipped)
    if skipped:
        names = sorted({s["dataset"] for s in skipped})
        fixes = list(dict.fromkeys(s["fix"] for s in skipped))
        typer.secho(
            f"{len(skipped)} of {len(files)} configs skipped: "
            f"their data is not here ({', '.join(names)}); get it with: " + " && ".join(fixes),
            err=True,
            fg="yellow",
            bold=True,
        )


_with_options(run_config, RUN_OPTIONS)
# no --out, --plot: rfbench figures draws the figures
_with_options(reproduce, [p for p in RUN_OPTIONS if p.name not in ("out", "plot")])


def add_config_commands(app: typer.Typer) -> None:
    """``rfbench run CONFIG.toml`` and ``rfbench reproduce``."""
    app.command("run")(run_config)
    app.command("reproduce")(reproduce)
