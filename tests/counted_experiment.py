"""A test experiment of three cheap jobs that counts how often its jobs ran (the runner's
checks before the first job are tested by a count of zero)."""

import pandas as pd

from rfbench.compute.experiments import Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.params import ExperimentParams


class CountedParams(ExperimentParams):
    reps: int = 3


@register_experiment
class Counted(Experiment):
    """Three cheap jobs that count how often any job of the class ran."""

    name = "preflight-counted"
    description = "counts its jobs"
    params = CountedParams
    jobs_run = 0

    def grid(self, config):
        return [JobSpec(rep=k) for k in range(config["reps"])]

    def run_job(self, spec, rng):
        type(self).jobs_run += 1
        return pd.DataFrame(
            {"estimator": ["c"], "kernel": [""], "metric": ["mean"], "value": [float(spec.rep)],
             "stderr": [None], "n_trials": [1]}
        )  # fmt: skip
