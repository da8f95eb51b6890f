"""Two rfbench processes at once: a second run into an output being written is refused (never a
silent replacement), ``cache clear`` never removes what a live run is writing, and a killed run's
lock is no obstacle. Real ``rfbench`` processes, whose jobs after the first wait while the test
holds them (a file ``hold``), so the first run is still running however loaded the machine is:
no test races a deadline.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rfbench.compute.results import load_provenance, load_results

pytestmark = pytest.mark.slow

SLOW = """
import pathlib
import time
import pandas as pd
from rfbench.compute.experiments import Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.params import ExperimentParams


class SlowParams(ExperimentParams):
    jobs: int = 6
    seconds: float = 0.5


@register_experiment
class Slow(Experiment):
    name = "slow"
    description = "Jobs that sleep."
    params = SlowParams

    def grid(self, config):
        return [JobSpec(k=k, seconds=config["seconds"]) for k in range(config["jobs"])]

    def run_job(self, spec, rng):
        time.sleep(spec["seconds"])
        started = time.monotonic()
        while spec["k"] > 0 and pathlib.Path("hold").exists() and time.monotonic() - started < 600:
            time.sleep(0.05)
        return pd.DataFrame({"estimator": ["x"], "kernel": [""], "metric": ["mean"],
                             "value": [float(spec["k"])], "stderr": [None], "n_trials": [1]})
"""


def _rfbench(tmp_path: Path, *args: str) -> subprocess.Popen:
    (tmp_path / "slow_plugin.py").write_text(SLOW)
    code = "import slow_plugin; from rfbench.entry import main; main()"
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "HOME": str(tmp_path)}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _slow_run(tmp_path: Path, out: Path, *extra: str) -> subprocess.Popen:
    args = ["slow", "--out", str(out), "--backend", "serial", "--quiet", "--no-plot", *extra]
    return _rfbench(tmp_path, *args)


def _until(condition, proc: subprocess.Popen, what: str, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"{what} did not happen: {proc.communicate()}")
        time.sleep(0.05)


def _finish(proc: subprocess.Popen) -> tuple[int, str]:
    """Exit status and stdout + stderr."""
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out + err


def test_a_second_run_into_the_same_output_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "res" / "s.parquet"
    (tmp_path / "hold").touch()
    first = _slow_run(tmp_path, out, "--profile", "quick", "--seconds", "0")
    lock = out.with_name(f".{out.name}.lock")
    _until(lock.exists, first, "the first run's lock")
    second = _slow_run(tmp_path, out, "--seconds", "0")
    code, err = _finish(second)
    (tmp_path / "hold").unlink()
    assert code == 2, err
    (line,) = err.strip().splitlines()
    assert line.startswith("rfbench: error: output") and "written by another rfbench run" in line
    assert f"pid {first.pid}" in line
    assert _finish(first) == (0, "")
    assert load_provenance(out)["config"]["profile"] == "quick"
    assert not lock.exists()  # released and removed when the run ended


def test_cache_clear_never_removes_what_a_live_run_writes(tmp_path: Path) -> None:
    out = tmp_path / "res" / "s.parquet"
    (tmp_path / "hold").touch()
    run = _slow_run(tmp_path, out, "--jobs", "8", "--seconds", "0")
    jobs = out.parent / ".rfbench-cache" / "jobs"
    _until(lambda: any(jobs.rglob("*.parquet")), run, "a first job file")
    cleared = _rfbench(tmp_path, "cache", "clear", str(out.parent))
    code, err = _finish(cleared)
    (tmp_path / "hold").unlink()
    assert code == 0 and "in use by a running rfbench" in err, err
    assert _finish(run) == (0, "")
    assert load_results(out)["value"].tolist() == [float(k) for k in range(8)]
    cleared = _rfbench(tmp_path, "cache", "clear", str(out.parent))  # the run has ended: it goes
    code, said = _finish(cleared)
    assert code == 0 and "removed 8 job file(s)" in said, said
    assert not (out.parent / ".rfbench-cache").exists()


def test_a_killed_runs_lock_is_never_stale(tmp_path: Path) -> None:
    out = tmp_path / "res" / "s.parquet"
    killed = _slow_run(tmp_path, out, "--seconds", "5")
    _until(out.with_name(f".{out.name}.lock").exists, killed, "the run's lock")
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    again = _slow_run(tmp_path, out, "--seconds", "0")
    assert _finish(again) == (0, "")
    assert load_results(out)["value"].tolist() == [float(k) for k in range(6)]


def test_a_run_waiting_while_cache_clear_empties_the_folder_takes_the_new_lock(
    tmp_path: Path,
) -> None:
    """``cache clear`` removes the lock file and the folder while a run waits on the old file: the
    run then locks a new file in a new folder, with the marker that makes it rfbench's."""
    import threading

    from rfbench.compute.runner import locks
    from rfbench.compute.runner.cache import (
        LOCK,
        MARKER,
        CacheInUse,
        clear_cache,
        hold,
        is_rfbench_cache,
    )

    root = tmp_path / ".rfbench-cache"
    with hold(root):
        pass  # a marked cache folder with its lock file, as a run leaves it
    clearing = locks.acquire(root / LOCK, exclusive=True, wait=False)  # cache clear holds it
    held = threading.Event()
    seen: list[object] = []

    def waiting_run() -> None:
        with hold(root):
            held.set()
            seen.append(is_rfbench_cache(root))
            try:
                clear_cache(root)  # a clear during this run leaves the folder alone
            except CacheInUse as exc:
                seen.append(exc)

    thread = threading.Thread(target=waiting_run)
    thread.start()
    time.sleep(0.3)
    assert not held.is_set()  # blocked behind the clear
    for name in (MARKER, LOCK):
        (root / name).unlink()
    root.rmdir()
    locks.release(clearing, root / LOCK, remove=False)
    thread.join(timeout=120)  # a deadline only for a hang: a loaded machine is slow, not wrong
    assert held.is_set() and is_rfbench_cache(root)
    assert seen[0] is True and isinstance(seen[1], CacheInUse)
