"""Range limits before a run: a value float64 cannot carry is a user error, said before any job.

The limits depend on the estimator, the kernel and the metric, so rather than keep a table of them
the runner asks the computation itself: per estimator, one cheap *probe* job (shrunk by the
experiment's ``probe_overrides``) at the most extreme value of each ``range_parameters``. A probe
that overflows, warns or returns a non-finite value is out of range; bisection on probes then finds
the value that runs, named in the :class:`~rfbench.compute.experiments.base.ConfigError`. A probe
that fails at every value is not a range problem: the run goes ahead and fails as the bug it is.
The probes run in this process on purpose: they fill per-process memos (the PNC theory's pair
moments: most of spectraformer-grid's 12 s of probes) that the job workers, forked later, inherit;
on a process pool the jobs computed them again and the run took longer.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.features.base import EstimateRangeError

#: how far a search for a value that runs goes (factors of 2) before calling it a bug
_MAX_STEPS = 40
#: geometric bisection steps once a bracket is known (2**-10 relative precision in log-scale)
_BISECTIONS = 10
_OUT_OF_RANGE = (OverflowError, FloatingPointError, EstimateRangeError, RuntimeWarning)


def probe_ok(experiment: Experiment, spec: JobSpec) -> bool:
    """Whether ``spec``, shrunk by the experiment's ``probe_overrides``, runs with finite values."""
    small = spec.replace(**{k: v for k, v in experiment.probe_overrides.items() if k in spec})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            rows = experiment.run_job(small, np.random.default_rng(0))
    except _OUT_OF_RANGE:
        return False
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    numeric = frame.select_dtypes("number")
    return not np.isinf(numeric.to_numpy(dtype=float)).any() and not (
        "value" in frame and frame["value"].isna().any()
    )


def _extremes(specs: Sequence[JobSpec], key: str) -> list[JobSpec]:
    """Per estimator, the jobs with the largest and the smallest value of ``key``."""
    by_estimator: dict[Any, list[JobSpec]] = {}
    for spec in specs:
        value = spec.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            by_estimator.setdefault(spec.get("estimator"), []).append(spec)
    out: list[JobSpec] = []
    for group in by_estimator.values():
        group = sorted(group, key=lambda s: s[key])
        out.extend([group[-1]] if group[0][key] == group[-1][key] else [group[-1], group[0]])
    return out


def _without_range(specs: Sequence[JobSpec], keys: Sequence[str]) -> list[JobSpec]:
    """One job per estimator among those on a user's data file with no range parameter: their
    inputs are what they are, so a probe that fails there is the inputs' scale. (Jobs of other
    kinds without a range parameter, e.g. theory's curves other than HRF Fig. 1, are not
    probed.)"""
    out: dict[Any, JobSpec] = {}
    for spec in specs:
        if spec.get("data") and all(not isinstance(spec.get(k), int | float) for k in keys):
            out.setdefault(spec.get("estimator"), spec)
    return list(out.values())


def _limit(experiment: Experiment, spec: JobSpec, key: str) -> float | None:
    """The value of ``key`` nearest to ``spec``'s that runs, or None when none does (a bug)."""
    bad = float(spec[key])
    for factor in (0.5, 2.0):
        good = bad
        for _ in range(_MAX_STEPS):
            good *= factor
            if probe_ok(experiment, spec.replace(**{key: good})):
                break
        else:
            continue
        low, high = good, bad
        for _ in range(_BISECTIONS):
            mid = math.sqrt(low * high)
            if probe_ok(experiment, spec.replace(**{key: mid})):
                low = mid
            else:
                high = mid
        return low
    return None


def check_ranges(experiment: Experiment, specs: Sequence[JobSpec]) -> None:
    """Raise :class:`ConfigError` naming the first value of a run float64 cannot carry.

    Parameters
    ----------
    experiment : Experiment
        Its ``range_parameters`` name the values probed, ``probe_overrides`` shrink the probes.
    specs : sequence of JobSpec
        The run's jobs; only the extreme value of each range parameter per estimator is probed.
    """
    if not experiment.range_parameters:
        return
    fixed = _without_range(specs, experiment.range_parameters)
    for spec in fixed:
        if not probe_ok(experiment, spec):
            who = f" for {spec['estimator']}" if "estimator" in spec else ""
            raise ConfigError(
                f"the inputs are out of float64 range{who} (kernel values, estimates or their "
                "moments overflow); rescale them (smaller norms)"
            )
    for key in experiment.range_parameters:
        for spec in _extremes(specs, key):
            if probe_ok(experiment, spec):
                continue
            limit = _limit(experiment, spec, key)
            if limit is None:
                return  # fails at every value: not a range problem, let the run report it
            side = "largest" if limit < spec[key] else "smallest"
            who = f" for {spec['estimator']}" if "estimator" in spec else ""
            raise ConfigError(
                f"invalid value for {key!r}: {spec[key]:g} is out of float64 range{who} "
                f"(kernel values, estimates or their moments overflow); the {side} value "
                f"that runs is about {_round(limit, side)}"
            )


def _round(value: float, side: str) -> str:
    """``value`` to 3 significant digits, rounded towards the safe side."""
    scale = 10 ** (math.floor(math.log10(value)) - 2)
    rounded = (math.floor if side == "largest" else math.ceil)(value / scale) * scale
    return f"{rounded:.3g}"
