"""A run resolves and validates its config once: the command resolves it, the runner takes it as
resolved (rfbench.compute.experiments.base.ResolvedConfig)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments import get_experiment
from rfbench.compute.results import load_provenance


@pytest.fixture
def counts(monkeypatch) -> collections.Counter:
    """Calls of the pointwise experiment's semantic checks and of the model validation."""
    import rfbench.compute.experiments.base as base

    found: collections.Counter = collections.Counter()
    pointwise = type(get_experiment("pointwise"))
    checks, resolve = pointwise.validate_config, base.resolve

    def validate_config(self, config):
        found["validate_config"] += 1
        return checks(self, config)

    def counted_resolve(*args, **kwargs):
        found["model"] += 1
        return resolve(*args, **kwargs)

    monkeypatch.setattr(pointwise, "validate_config", validate_config)
    monkeypatch.setattr(base, "resolve", counted_resolve)
    return found


def _run(*args: str) -> None:
    done = CliRunner().invoke(app, [*args, "--backend", "serial", "--quiet", "--no-plot"])
    assert done.exit_code == 0, done.output


def test_a_command_line_run_validates_once(tmp_path: Path, counts) -> None:
    out = tmp_path / "p.parquet"
    _run("pointwise", "--profile", "quick", "--out", str(out))
    assert load_provenance(out)["n_jobs"] == 4
    assert counts == {"validate_config": 1, "model": 1}


def test_a_config_file_run_validates_once(tmp_path: Path, counts) -> None:
    config = tmp_path / "p.toml"
    config.write_text('experiment = "pointwise"\n[params]\nr = [1.0, 1.5]\nestimators = '
                      '["trig@iid", "hyperbolic@iid"]\n')  # fmt: skip
    out = tmp_path / "p.parquet"
    _run("run", str(config), "--profile", "quick", "--out", str(out))
    assert load_provenance(out)["n_jobs"] == 4
    assert counts == {"validate_config": 1, "model": 1}
