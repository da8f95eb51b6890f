"""Exit statuses: 2 and one line for user errors, 1 and a log file with the traceback for bugs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rfbench.cli.app import cli
from rfbench.compute.datasets import DataError
from rfbench.compute.experiments import Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.params import ExperimentParams

ROW = {"estimator": "t", "kernel": "", "metric": "mean", "stderr": None, "n_trials": 1}


class FaultyParams(ExperimentParams):
    fault: str = "none"
    points: int = 2


@register_experiment
class Faulty(Experiment):
    name = "faulty-cli"
    description = "A test experiment with a bug in its grid or its jobs, or a missing data file."
    params = FaultyParams

    def grid(self, config):
        if config["fault"] == "grid":
            return [JobSpec(k=k) for k in {}["oops"]]  # a KeyError: a bug
        return [JobSpec(k=k, fault=config["fault"]) for k in range(config["points"])]

    def run_job(self, spec, rng):
        if spec["fault"] == "job" and spec["k"] == 1:
            raise KeyError("in the job")
        if spec["fault"] == "data":
            raise DataError("data set 'x': file /nowhere/x.csv is missing")
        return [{**ROW, "value": float(spec["k"])}]


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RFBENCH_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.delenv("RFBENCH_DEBUG", raising=False)
    return tmp_path / "logs"


def _config(tmp_path: Path, fault: str) -> str:
    path = tmp_path / f"{fault}.toml"
    path.write_text(f'experiment = "faulty-cli"\n[params]\nfault = "{fault}"\n')
    return str(path)


def _run(tmp_path: Path, fault: str, *extra: str) -> list[str]:
    out = tmp_path / "out.parquet"
    return ["run", _config(tmp_path, fault), "--out", str(out), "--quiet", *extra]


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_a_bug_in_a_grid_exits_1_with_the_traceback_in_a_log(tmp_path, logs, capsys) -> None:
    assert cli(_run(tmp_path, "grid", "--backend", "serial")) == 1
    line = _one_line(capsys)
    prefix = "rfbench: internal error: KeyError: 'oops' (traceback in "
    assert line.startswith(prefix) and line.endswith(")"), line
    log = Path(line[len(prefix) : -1])
    assert log.parent == logs and log.is_file()
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and '{}["oops"]' in text
    assert not (tmp_path / "out.parquet").exists()

    assert cli(_run(tmp_path, "grid", "--backend", "serial")) == 1  # a new log per error
    assert len(list(logs.iterdir())) == 2


@pytest.mark.parametrize("backend", ["serial", "processes"])
def test_a_bug_in_a_job_names_the_job(tmp_path, logs, capsys, backend) -> None:
    assert cli(_run(tmp_path, "job", "--backend", backend, "--workers", "2")) == 1
    line = _one_line(capsys)
    assert line.startswith("rfbench: internal error: KeyError: 'in the job' in job JobSpec(")
    log = Path(line.rsplit("(traceback in ", 1)[1][:-1])
    assert 'raise KeyError("in the job")' in log.read_text()  # the worker's traceback too


def test_debug_prints_the_traceback(tmp_path, logs, capsys, monkeypatch) -> None:
    assert cli(["--debug", *_run(tmp_path, "grid", "--backend", "serial")]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "internal error: KeyError" in err
    assert cli(_run(tmp_path, "grid", "--backend", "serial")) == 1  # --debug does not stick
    _one_line(capsys)
    monkeypatch.setenv("RFBENCH_DEBUG", "1")
    assert cli(_run(tmp_path, "grid", "--backend", "serial")) == 1
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_user_errors_exit_2_in_one_line_without_output(tmp_path, logs, capsys) -> None:
    out = tmp_path / "out.parquet"
    cases = [
        (_run(tmp_path, "data", "--backend", "serial"), "file /nowhere/x.csv is missing"),
        (_run(tmp_path, "none", "--workers", "0"), "invalid value for 'workers': 0"),
        (_run(tmp_path, "none", "--seed", "x"), "'--seed'"),  # a usage error
        (_run(tmp_path, "none", "--no-such-option"), "No such option: --no-such-option"),
        (["theory", "--curves", "nope", "--out", str(out)], "curves"),
        (["run", str(tmp_path / "missing.toml")], "missing.toml"),
    ]
    for args, needle in cases:
        assert cli(args) == 2, args
        line = _one_line(capsys)
        assert line.startswith("rfbench: error: ") and needle in line, line
    assert not out.exists() and not logs.exists()


def test_a_console_that_cannot_encode_the_output_gets_it_replaced_not_a_crash() -> None:
    """With an ascii (or latin-1) console, σ, λ or § in a help or a table ended the command in
    an internal error (UnicodeEncodeError)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    command = [sys.executable, "-c", "from rfbench.entry import main; main()"]
    for args in (["list", "estimators"], ["pointwise", "--help"]):
        done = subprocess.run([*command, *args], capture_output=True, env=env, timeout=120)
        assert done.returncode == 0 and b"rfbench" in done.stdout, done.stderr.decode()
    bad = subprocess.run([*command, "pointwise", "--r", "nan"], capture_output=True, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith(b"rfbench: error: invalid value for 'r'")
