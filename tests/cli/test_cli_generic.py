"""The generated experiment commands: option parsing, defaults, one-line errors with exit 2."""

from __future__ import annotations

import numpy as np
import typer
from pydantic import Field
from typer.testing import CliRunner

from rfbench.cli.experiments import add_config_commands, add_experiment_command
from rfbench.cli.params import parse_value
from rfbench.compute.experiments import ConfigError, Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.params import ExperimentParams, Values, describe
from rfbench.compute.results import load_provenance, load_results


class ShiftParams(ExperimentParams):
    mu: Values[float] = Field([0.0, 1.0], description="means to try")
    samples: int = 16
    label: str = "x"
    centred: bool = False


@register_experiment
class Shift(Experiment):
    name = "shift-cli"
    description = "Mean of N(mu, 1) samples. A toy for the CLI tests."
    params = ShiftParams

    def validate_config(self, config):
        if config["samples"] < 1:
            raise ConfigError.bad_value("samples", config["samples"], "a positive integer")

    def grid(self, config):
        return [JobSpec(mu=mu, samples=config["samples"]) for mu in config["mu"]]

    def run_job(self, spec, rng):
        x = spec["mu"] + rng.standard_normal(spec["samples"])
        return [
            {
                "estimator": "mc",
                "kernel": "",
                "metric": "mean",
                "value": float(x.mean()),
                "stderr": None,
                "n_trials": spec["samples"],
                "r": spec["mu"],
            }
        ]


def make_app() -> typer.Typer:
    app = typer.Typer()
    add_experiment_command(app, Shift())
    add_config_commands(app)
    return app


def invoke(*args: str):
    return CliRunner().invoke(make_app(), list(args))


def test_options_override_defaults_and_write_parquet(tmp_path):
    out = tmp_path / "r.parquet"
    res = invoke(
        "shift-cli",
        "--mu",
        "0.5,2",
        "--samples",
        "8",
        "--out",
        str(out),
        "--backend",
        "serial",
        "--quiet",
    )
    assert res.exit_code == 0, res.output
    df = load_results(out)
    assert sorted(df["r"]) == [0.5, 2.0] and set(df["n_trials"]) == {8}
    assert load_provenance(out)["config"]["mu"] == [0.5, 2.0]


def test_summary_table_and_path_are_printed(tmp_path):
    out = tmp_path / "r.parquet"
    res = invoke("shift-cli", "--out", str(out), "--backend", "serial")
    assert res.exit_code == 0, res.output
    assert "results:" in res.output and "mean" in res.output


def _assert_one_line_error(res, *needles: str) -> None:
    assert res.exit_code == 2, res.output
    text = res.output.strip()
    assert "Traceback" not in text
    for needle in needles:
        assert needle in text, text


def test_bad_values_exit_2_without_output(tmp_path):
    out = tmp_path / "r.parquet"
    _assert_one_line_error(invoke("shift-cli", "--samples", "0", "--out", str(out)), "samples")
    _assert_one_line_error(invoke("shift-cli", "--mu", "a,b", "--out", str(out)), "--mu")
    _assert_one_line_error(invoke("shift-cli", "--profile", "fast", "--out", str(out)), "profile")
    _assert_one_line_error(invoke("shift-cli", "--backend", "gpu", "--out", str(out)), "backend")
    assert not out.exists()


def test_malformed_config_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('experiment = "shift-cli"\n[params]\nmu = "oops"\nunknown_key = 3\n')
    _assert_one_line_error(invoke("run", str(bad)), "bad.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("experiment = [\n")
    _assert_one_line_error(invoke("run", str(broken)), "broken.toml")
    _assert_one_line_error(invoke("run", str(tmp_path / "missing.toml")), "missing.toml")


class Typed(ExperimentParams):
    r: Values[float] = [1.0, 1.25]
    m: Values[int] = [128]
    samples: int = 5
    centred: bool = False
    sigma: float = 1.0


def test_parse_value_types():
    fields = describe(Typed)
    assert parse_value(fields["r"], "1.5") == [1.5]
    assert parse_value(fields["m"], "64,128") == [64, 128]
    assert parse_value(fields["r"], "1,2") == [1.0, 2.0]
    assert parse_value(fields["samples"], "10") == 10
    assert parse_value(fields["centred"], "yes") is True
    assert np.isclose(parse_value(fields["sigma"], "0.5"), 0.5)


def test_config_file_runs(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text(
        'experiment = "shift-cli"\nfigure = "toy-fig"\n[params]\nmu = [3.0]\n'
        "[profiles.quick]\nsamples = 4\n"
    )
    out = tmp_path / "g.parquet"
    res = invoke("run", str(good), "--profile", "quick", "--out", str(out), "--backend", "serial")
    assert res.exit_code == 0, res.output
    df = load_results(out)
    assert list(df["figure"]) == ["toy-fig"] and list(df["n_trials"]) == [4]
