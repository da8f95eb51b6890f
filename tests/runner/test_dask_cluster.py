"""The Dask backend on a real cluster: ``dask scheduler`` and two ``dask worker`` processes.

Everything listens on 127.0.0.1 with ports chosen by the system (the scheduler writes its address
to a scheduler file). Runs go through the CLI in a separate client process, like a user's:
``rfbench pointwise --backend dask --scheduler ADDRESS``. Checked: the rows are bit-identical to
``--backend serial``, also when a worker is killed mid-run; a client killed mid-run and restarted
reuses the jobs it had finished. The processes are stopped at the end whatever happens.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from rfbench.cli.app import cli
from rfbench.compute.results import load_results
from rfbench.compute.runner import cache_dir

DASK = Path(sys.executable).with_name("dask")
TIMEOUT = 120.0  # seconds: generous, for a loaded machine; a healthy run takes a few seconds
# 12 jobs of ~0.15 s CPU each: long enough to kill a process while jobs are still pending
POINTWISE = [
    "pointwise",
    "--estimators",
    "trig@iid,positive@iid,hyperbolic@iid,trig@orf",
    "--projection-budget",
    "64",
    "--r",
    "1.0,1.25,1.5",
    "--angles",
    "5",
    "--samples",
    "10000",
    "--d",
    "16",
    "--quiet",
]
N_JOBS = 12


def _wait(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> object:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


def _start(args: list[str], log: Path, cwd: Path) -> subprocess.Popen:
    with open(log, "wb") as fh:
        return subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT, cwd=cwd)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Cluster:
    """A scheduler and two single-threaded workers (no nanny: killing one kills its jobs)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: list[subprocess.Popen] = []
        self.address = ""
        self.workers: list[subprocess.Popen] = []

    def start(self) -> None:
        scheduler_file = self.folder / "scheduler.json"
        self.scheduler = self._spawn(
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(scheduler_file),
        )
        text = _wait(lambda: scheduler_file.is_file() and scheduler_file.read_text(), "scheduler")
        self.address = json.loads(str(text))["address"]
        self.workers = [self.start_worker(f"w{i}") for i in range(2)]
        self.wait_for_workers(2)

    def _spawn(self, role: str, *args: str) -> subprocess.Popen:
        proc = _start(
            [str(DASK), role, *args], self.folder / f"{role}-{len(self.procs)}.log", self.folder
        )
        self.procs.append(proc)
        return proc

    def start_worker(self, name: str) -> subprocess.Popen:
        return self._spawn(
            "worker",
            self.address,
            "--name",
            name,
            "--host",
            "127.0.0.1",
            "--nthreads",
            "1",
            "--no-nanny",
            "--no-dashboard",
            "--local-directory",
            str(self.folder / name),
        )

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=TIMEOUT) as client:
            client.wait_for_workers(n, timeout=TIMEOUT)

    def close(self) -> None:
        for proc in reversed(self.procs):
            _stop(proc)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("dask")
    cluster = Cluster(folder)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("serial") / "p.parquet"
    assert cli([*POINTWISE, "--backend", "serial", "--out", str(out)]) == 0
    return load_results(out)


def _client(cluster: Cluster, out: Path) -> list[str]:
    code = "import sys; from rfbench.cli.app import cli; sys.exit(cli(sys.argv[1:]))"
    options = ["--backend", "dask", "--scheduler", cluster.address, "--out", str(out)]
    return [sys.executable, "-c", code, *POINTWISE, *options]


def _cached(out: Path) -> list[Path]:
    return sorted(cache_dir(out).rglob("*.parquet")) if cache_dir(out).is_dir() else []


def _run_until_cached(cluster: Cluster, out: Path, n: int) -> subprocess.Popen:
    """Start a client and return once ``n`` of its jobs are cached (and some are still to do)."""
    client = _start(_client(cluster, out), out.with_suffix(".log"), out.parent)
    _wait(lambda: len(_cached(out)) >= n or client.poll() is not None, f"{n} cached jobs")
    assert client.poll() is None and len(_cached(out)) < N_JOBS, "the run ended too early"
    return client


def _finish(client: subprocess.Popen, out: Path) -> pd.DataFrame:
    assert client.wait(TIMEOUT) == 0, Path(client.args[-1]).with_suffix(".log").read_text()
    return load_results(out)


@pytest.mark.slow
def test_a_killed_worker_loses_nothing(cluster: Cluster, serial: pd.DataFrame, tmp_path) -> None:
    from distributed import Client

    out = tmp_path / "p.parquet"
    client = _run_until_cached(cluster, out, 2)
    victim = cluster.workers[1]
    with Client(cluster.address, timeout=TIMEOUT) as observer:
        workers = observer.scheduler_info()["workers"]
        address = next(a for a, w in workers.items() if w["name"] == "w1")
        _wait(lambda: observer.processing([address])[address], "a job on the second worker")
        victim.send_signal(signal.SIGKILL)  # while it holds a job
    victim.wait(TIMEOUT)
    got = _finish(client, out)
    pd.testing.assert_frame_equal(got, serial, check_exact=True)
    assert len(_cached(out)) == N_JOBS


@pytest.mark.slow
def test_a_restarted_client_reuses_finished_jobs(
    cluster: Cluster, serial: pd.DataFrame, tmp_path
) -> None:
    out = tmp_path / "p.parquet"
    client = _run_until_cached(cluster, out, 2)
    client.send_signal(signal.SIGKILL)
    client.wait(TIMEOUT)
    finished = {p: p.stat().st_ino for p in _cached(out)}
    assert 2 <= len(finished) < N_JOBS and not out.exists()

    got = _finish(_start(_client(cluster, out), out.with_suffix(".log"), tmp_path), out)
    pd.testing.assert_frame_equal(got, serial, check_exact=True)
    assert {p: p.stat().st_ino for p in finished} == finished  # reused, not recomputed
    assert len(_cached(out)) == N_JOBS
