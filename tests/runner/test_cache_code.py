"""The job cache keys on the code: an edited copy of the package recomputes, never serves old rows.

The package is copied to a temporary folder with a small probe experiment; runs in fresh processes
(PYTHONPATH pointing at the copy) count their ``run_job`` calls in a file. Also ``rfbench cache
info|clear`` on a results folder with current and stale job files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments import ConfigError, Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.params import ExperimentParams
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run
from rfbench.compute.runner.cache import cache_dir, cache_usage
from rfbench.compute.runner.digest import PACKAGE_DIR, check_workers, code_tag

PROBE = """
import os
from rfbench.compute.experiments import ConfigError, Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.params import ExperimentParams, Values


class CacheProbeParams(ExperimentParams):
    mu: Values[float] = [0.0, 1.0, 2.0]


@register_experiment
class CacheProbe(Experiment):
    name = "cache-probe"
    description = "A normal draw per job; counts its calls in $PROBE_CALLS."
    params = CacheProbeParams

    def grid(self, config):
        return [JobSpec(mu=mu) for mu in config["mu"]]

    def run_job(self, spec, rng):
        with open(os.environ["PROBE_CALLS"], "a") as fh:
            fh.write("call\\n")
        value = spec["mu"] + rng.standard_normal()
        return [{"estimator": "probe", "kernel": "", "metric": "mean", "value": value,
                 "stderr": None, "n_trials": 1}]
"""
ORIGINAL, EDITED = '"value": value,', '"value": value * 1000,'


def _run_copy(src: Path, out: Path, calls: Path, *extra: str) -> tuple[np.ndarray, int]:
    """Run the probe with the package copy in ``src``; its values and the run_job calls so far."""
    code = "import sys; from rfbench.cli.app import cli; sys.exit(cli(sys.argv[1:]))"
    args = ["cache-probe", "--out", str(out), "--backend", "serial", "--quiet", *extra]
    env = {**os.environ, "PYTHONPATH": str(src), "PROBE_CALLS": str(calls)}
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd=src,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    n_calls = len(calls.read_text().splitlines()) if calls.exists() else 0
    return load_results(out)["value"].to_numpy(), n_calls


@pytest.mark.slow
def test_an_edited_copy_of_the_source_misses_the_cache(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(PACKAGE_DIR, src / "rfbench", ignore=shutil.ignore_patterns("__pycache__"))
    probe = src / "rfbench" / "compute" / "experiments" / "cache_probe.py"
    probe.write_text(PROBE)
    out, calls = tmp_path / "res" / "probe.parquet", tmp_path / "calls.txt"

    first, n = _run_copy(src, out, calls)
    assert n == 3
    again, n = _run_copy(src, out, calls)
    assert n == 3 and np.array_equal(again, first)  # same code: every job from the cache

    assert probe.read_text().count(ORIGINAL) == 1
    probe.write_text(probe.read_text().replace(ORIGINAL, EDITED))
    edited, n = _run_copy(src, out, calls)
    assert n == 6  # the edit is a cache miss: every job recomputed ...
    assert np.array_equal(edited, first * 1000)  # ... with the new code's numbers
    forced, n = _run_copy(src, out, calls, "--force")
    assert n == 9 and np.array_equal(forced, edited)

    tags = sorted(p.name for p in cache_dir(out).iterdir())
    assert len(tags) == 2 and code_tag() not in tags  # one folder per code; the copy's differ

    present = src / "rfbench" / "present"
    for edited_file in (
        "plots/style.py",
        "reference/__init__.py",
        "compare/compare.py",
        "summaries/gram.py",
    ):
        # a colour, a legend label, rfbench compare, a terminal summary
        path = present / edited_file
        path.write_text(path.read_text() + "\n# an edit of the presentation\n")
    (src / "rfbench" / "cli" / "show.py").write_text(
        (src / "rfbench" / "cli" / "show.py").read_text() + "\n# a terminal table\n"
    )
    again, n = _run_copy(src, out, calls)
    assert n == 9 and np.array_equal(again, edited)  # presentation edits recompute nothing


class SquaresParams(ExperimentParams):
    reps: int = 3


@register_experiment
class Squares(Experiment):
    name = "cache-squares"
    description = "rep squared, no randomness"
    params = SquaresParams

    def grid(self, config):
        return [JobSpec(rep=k) for k in range(config["reps"])]

    def run_job(self, spec, rng):
        return pd.DataFrame(
            {"estimator": ["sq"], "kernel": [""], "metric": ["mean"], "value": [spec.rep**2.0],
             "stderr": [None], "n_trials": [1]}
        )  # fmt: skip


def test_cache_info_and_clear(tmp_path: Path) -> None:
    res = tmp_path / "res"
    out = res / "squares" / "a.parquet"
    run(Squares(), None, RunOptions(out=out, backend="serial", quiet=True))
    run(
        Squares(),
        {"reps": 2},
        RunOptions(out=res / "squares" / "b.parquet", backend="serial", quiet=True),
    )
    current = cache_dir(out) / code_tag()
    shutil.copytree(current, cache_dir(out) / ("0" * 16))  # as if written by other code
    shutil.copy(next(current.iterdir()), cache_dir(out) / "not-ours.parquet")
    root = res / "squares" / ".rfbench-cache"
    usage = cache_usage(root)
    # one cache per folder: b's two jobs are a's first two (the same keys), computed once
    assert (usage.files, usage.current, usage.stale) == (10, 5, 5)
    assert usage.foreign == (cache_dir(out) / "not-ours.parquet",)

    runner = CliRunner()
    shown = runner.invoke(app, ["cache", "info", str(res)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert str(res / "squares") in shown.output and code_tag() in shown.output

    cleared = runner.invoke(app, ["cache", "clear", "--stale-only", str(res)])
    assert cleared.exit_code == 0 and "removed 5 job file(s)" in cleared.output, cleared.output
    assert "not-ours.parquet: not written by rfbench" in cleared.output
    usage = cache_usage(root)
    assert (usage.files, usage.current) == (5, 5)
    assert load_results(run(Squares(), None, RunOptions(out=out, backend="serial", quiet=True)))[
        "value"
    ].tolist() == [
        0.0,
        1.0,
        4.0,
    ]

    cleared = runner.invoke(app, ["cache", "clear", str(res)])
    assert cleared.exit_code == 0 and "removed 5 job file(s)" in cleared.output, cleared.output
    assert out.exists() and (cache_dir(out) / "not-ours.parquet").is_file()
    assert not (cache_dir(out) / code_tag()).exists()

    missing = runner.invoke(app, ["cache", "info", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    file = runner.invoke(app, ["cache", "clear", str(out)])  # a file: it said 'does not exist'
    assert file.exit_code == 2 and f"'{out}' is a file; give the results folders" in file.output
    assert out.exists()


def test_workers_with_other_code_are_refused() -> None:
    class FakeClient:  # what distributed.Client.run returns: {worker address: fn() there}
        def __init__(self, **changes: str) -> None:
            self.changes = changes

        def run(self, fn):
            return {"tcp://a:1": fn(), "tcp://b:2": {**fn(), **self.changes}}

    check_workers(FakeClient())
    for change in ({"code": "0" * 64}, {"numpy": "1.0.0"}):
        with pytest.raises(ConfigError, match=r"dask worker tcp://b:2 runs other code"):
            check_workers(FakeClient(**change))
