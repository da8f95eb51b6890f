"""A lock file never follows a symbolic link (issue 44 item 2): a ``.<out>.lock`` or a cache lock
that is a link to a user's file leaves that file's bytes alone and is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments import Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.params import ExperimentParams
from rfbench.compute.runner import RunOptions, locks, run
from rfbench.compute.runner.cache import CACHE_DIRNAME, LOCK

USER_BYTES = b"a user's precious file\n" * 80


class LinkCubesParams(ExperimentParams):
    reps: int = 2


@register_experiment
class LinkCubes(Experiment):
    name = "lock-link-cubes"
    description = "rep cubed, no randomness"
    params = LinkCubesParams

    def grid(self, config):
        return [JobSpec(rep=k) for k in range(config["reps"])]

    def run_job(self, spec, rng):
        return pd.DataFrame(
            {"estimator": ["cube"], "kernel": [""], "metric": ["mean"], "value": [spec.rep**3.0],
             "stderr": [None], "n_trials": [1]}
        )  # fmt: skip


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(USER_BYTES)
    return victim


@pytest.mark.parametrize("exclusive", [True, False])
def test_acquire_refuses_a_link_and_leaves_its_target(tmp_path: Path, exclusive: bool) -> None:
    victim = _victim(tmp_path)
    lock = tmp_path / ".out.parquet.lock"
    lock.symlink_to(victim)
    with pytest.raises(locks.LinkRefused, match="symbolic link"):
        locks.acquire(lock, exclusive=exclusive, wait=False)
    assert victim.read_bytes() == USER_BYTES


def test_a_dangling_link_is_not_created_through(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    lock.symlink_to(tmp_path / "made-through-the-link")
    with pytest.raises(locks.LinkRefused):
        locks.acquire(lock, exclusive=True, wait=False)
    assert not (tmp_path / "made-through-the-link").exists()


def test_run_refuses_a_linked_output_lock_in_one_line(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "res" / "x.parquet"
    out.parent.mkdir()
    (out.parent / ".x.parquet.lock").symlink_to(victim)
    from rfbench.compute.experiments import ConfigError

    with pytest.raises(ConfigError, match="symbolic link"):
        run(LinkCubes(), None, RunOptions(out=out, backend="serial", quiet=True))
    assert victim.read_bytes() == USER_BYTES and not out.exists()


def test_run_refuses_a_linked_cache_lock(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "x.parquet"
    (tmp_path / CACHE_DIRNAME).mkdir()
    (tmp_path / CACHE_DIRNAME / LOCK).symlink_to(victim)
    from rfbench.compute.experiments import ConfigError

    with pytest.raises(ConfigError, match="symbolic link"):
        run(LinkCubes(), None, RunOptions(out=out, backend="serial", quiet=True))
    assert victim.read_bytes() == USER_BYTES


def test_cache_clear_through_a_linked_lock_changes_nothing(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "x.parquet"
    run(LinkCubes(), None, RunOptions(out=out, backend="serial", quiet=True))
    lock = tmp_path / CACHE_DIRNAME / LOCK
    lock.unlink(missing_ok=True)
    lock.symlink_to(victim)
    done = CliRunner().invoke(app, ["cache", "clear", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert "symbolic link" in done.output and "Traceback" not in done.output
    assert victim.read_bytes() == USER_BYTES
    assert list((tmp_path / CACHE_DIRNAME).rglob("*.parquet"))  # nothing cleared through it
