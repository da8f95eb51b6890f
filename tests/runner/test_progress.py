"""In-job progress (rfbench.compute.experiments.chunks): jobs report per chunk, backends carry it
back.

A fake experiment's job reports 10 sub-steps of 1/10; the progress recorder must see all of them,
tagged with the job, from the serial and the processes backends; the results stay the same as
without a recorder (progress is a side channel), and ``advance`` is a no-op outside a run.
"""

from __future__ import annotations

import io
from collections import defaultdict

import numpy as np
import pytest
from rich.console import Console

from rfbench.compute.experiments import Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.chunks import CHUNK_BYTES, advance, chunk_size, chunks, reporting
from rfbench.compute.experiments.params import ExperimentParams
from rfbench.compute.runner.backends import run_processes, run_serial
from rfbench.compute.runner.progress import JobProgress

STEPS = 10


class StepperParams(ExperimentParams):
    jobs: int = 3


@register_experiment
class Stepper(Experiment):
    name = "test-stepper"
    description = "a job in 10 chunks, reporting each"
    params = StepperParams
    profiles = {"quick": {}, "paper": {}}

    def grid(self, config):
        return [JobSpec(k=k) for k in range(config["jobs"])]

    def run_job(self, spec, rng):
        total = 0.0
        for start, stop in chunks(STEPS, CHUNK_BYTES):  # one item per chunk: 10 chunks
            total += rng.standard_normal(stop - start).sum()
        row = {"estimator": "none", "kernel": "softmax", "metric": "mean", "value": total}
        return [{**row, "stderr": None, "n_trials": STEPS}]


TASKS = [(i, JobSpec(k=i)) for i in range(3)]


@pytest.mark.parametrize("backend", ["serial", "processes"])
def test_recorder_sees_every_sub_step_of_every_job(backend):
    seen: dict[int, list[float]] = defaultdict(list)

    def record(index: int, fraction: float) -> None:
        seen[index].append(fraction)

    if backend == "serial":
        results = dict(run_serial(Stepper(), TASKS, 0, record))
    else:
        results = dict(run_processes(Stepper(), TASKS, 0, 2, record))
    assert sorted(seen) == [0, 1, 2]
    for steps in seen.values():
        assert len(steps) == STEPS
        np.testing.assert_allclose(steps, 1.0 / STEPS)
    plain = dict(run_serial(Stepper(), TASKS, 0))  # no recorder: the same rows
    for index, rows in plain.items():
        assert rows.equals(results[index])


def test_advance_outside_a_run_does_nothing_and_sinks_nest():
    advance(0.5)  # no sink: no error, no effect
    outer: list[float] = []
    inner: list[float] = []
    with reporting(outer.append):
        advance(0.1)
        with reporting(inner.append):
            advance(0.2)
        advance(0.3)
    assert outer == [0.1, 0.3] and inner == [0.2]


def test_chunk_sizes_respect_the_budget():
    assert chunk_size(CHUNK_BYTES / 4, 100) == 4
    assert chunk_size(10 * CHUNK_BYTES, 100) == 1  # one item larger than the budget: alone
    assert chunk_size(1, 7) == 7
    got = list(chunks(10, CHUNK_BYTES / 3))
    assert got == [(0, 3), (3, 6), (6, 9), (9, 10)]


def test_bar_counts_partial_jobs_and_never_twice():
    buf = io.StringIO()
    console = Console(file=buf, width=100, force_terminal=False)
    bar = JobProgress(2, console=console, delay=0.0)
    with bar:
        bar.job_progress(0, 0.5)
        bar.job_progress(0, 0.7)  # capped below a whole job while it runs
        assert bar._progress.tasks[0].completed == pytest.approx(0.99)
        bar.job_done(0)
        bar.job_progress(0, 0.3)  # a late message of a finished job is ignored
        bar.job_progress(1, 0.25)
        assert bar._progress.tasks[0].completed == pytest.approx(1.25)
        bar.job_done(1)
        assert bar._progress.tasks[0].completed == pytest.approx(2.0)
