"""Sequential draws of classify (``stop = "resolved"``; docs/experiments.md#classify-stop,
docs/architecture.md#sequential-draws).

One job per cell (data set, σ or σ grid, m or budget) holds every estimator of the config, so
that the cell can stop when the question it declares is resolved: is the ``compare`` estimator
the most accurate of the cell (the claims of SimRF Fig. 8 and DERF Fig. 3)? It reads the
``compare`` estimator's test accuracy minus each other estimator's, draw by draw, and stops when
every difference is positive or one is negative
(:func:`rfbench.compute.sequential.sample_until_resolved`, question ``best``); an estimator whose
difference is settled before the others draws no further (its row says over how many draws).

Estimators are independent (each its own keyed stream, ``substream(rng, {"estimator": name})``,
as in every experiment) and each batch is a keyed substream of its estimator's stream,
``("batch", i)``: the draws of batch i do not depend on how many batches ran before, and the
stopping point depends on the job key only. The difference of draw i of two independent estimators
is i.i.d., so the paired confidence sequence is valid; common random numbers would narrow it
only where estimators consume the same ω, which they do not (each its own law and data-dependent
fit), and would tie one estimator's rows to which others the config lists.

With ``tune``, σ is chosen on the ``val_trials`` validation draws by successive elimination
(:func:`rfbench.compute.sequential.select_best`: the σ of the grid share the draws, and a σ
clearly behind the leader is evaluated no further; each σ's ``val_accuracy`` row says over how
many draws), and those draws are the first test batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from rfbench.compute import sequential
from rfbench.compute.experiments.base import JobSpec
from rfbench.compute.experiments.classify.data import fit_sets as fit_on
from rfbench.compute.experiments.classify.kernel_regression import rf_accuracies, slice_draws
from rfbench.compute.experiments.classify.params import DTYPES
from rfbench.compute.features import registry
from rfbench.compute.seeding import substream
from rfbench.compute.stats import mean_se

#: the key of the comparisons a cell declares in its rows (the estimator compared with)
VERSUS = "versus"


def reading_groups(
    declared: Mapping[str, tuple[str, str]], alternatives: tuple[str, ...]
) -> list[list[str]]:
    """The rival sets of the question's readings: each of the ``alternatives`` (readings of one
    method, e.g. the two TrigRFs of DERF Fig. 3) is a rival in its own reading only."""
    alts = [a for a in alternatives if any(other == a for _, other in declared.values())]
    if len(alts) < 2:
        return []
    return [
        [k for k, (_, other) in declared.items() if other == keep or other not in alts]
        for keep in alts
    ]


def comparisons(estimators: tuple[str, ...], compare: str) -> dict[str, tuple[str, str]]:
    """The cell's declared comparisons: ``compare`` minus every other estimator of the cell; with
    ``compare`` empty or absent from the cell, every later estimator minus the first."""
    ref = compare if compare in estimators else estimators[0]
    return {f"{ref} - {e}": (ref, e) for e in estimators if e != ref}


def _arm(
    spec: JobSpec,
    data,
    name: str,
    rng: np.random.Generator,
    sets: Callable[[float, str], tuple],
    size_of: Callable[[str], int],
    fitted: Callable,
) -> tuple[Callable[[int, int], np.ndarray], list[dict[str, Any]], dict[str, Any]]:
    """One estimator of the cell: its batch sampler (batch i, size -> accuracies), its validation
    rows (tuned cells) and its row base."""
    d = data.d
    M = size_of(name)
    est = registry.get(name, kernel=spec["kernel"], m=M)
    own = substream(rng, {"estimator": name})
    dtype = DTYPES[spec["dtype"]]
    base: dict[str, Any] = {"estimator": name, "m": M, "m_per_d": M / d}
    if "budget" in spec:
        base["budget"] = spec["budget"]

    fit_sets = partial(fit_on, data, spec["fit"])
    tuned = "sigmas" in spec
    draw_fit = fit_sets(spec["sigmas"][0], "val") if tuned else fit_sets(spec["sigma"], "test")

    def projections(i: int, size: int):
        return est.sample(substream(own, ("batch", i)), d, draws=size, fit=draw_fit).projections[
            "omega"
        ]

    val_rows: list[dict[str, Any]] = []
    first = None
    sigma = spec.get("sigma")
    if tuned:
        first = projections(0, spec["val_trials"])
        fits = {
            s: fitted(est, substream(own, ("fit", "val", s)), d, *fit_sets(s, "val"))
            for s in spec["sigmas"]
        }

        def validate(s: float, start: int, stop: int) -> np.ndarray:
            proj = slice_draws(first, start, stop)
            return rf_accuracies(est, proj, fits[s], *sets(s, "val"), dtype=dtype)

        look = max(10, spec["val_trials"] // 5)  # σ̂ of fewer draws is too rough to drop a σ
        sigma, drawn = sequential.select_best(validate, spec["sigmas"], spec["val_trials"], look)
        for s, acc in drawn.items():
            mean, se = mean_se(acc)
            val_rows.append({**base, "sigma": s, "metric": "val_accuracy", "value": mean,
                             "stderr": se, "n_trials": len(acc)})  # fmt: skip
    test_params = fitted(est, substream(own, ("fit", "test")), d, *fit_sets(sigma, "test"))
    test_sets = sets(sigma, "test")

    def batch(i: int, size: int) -> np.ndarray:
        proj = first if (i == 0 and first is not None) else projections(i, size)
        return rf_accuracies(est, proj, test_params, *test_sets, dtype=dtype)

    return batch, val_rows, {**base, "sigma": sigma}


def cell_rows(
    spec: JobSpec,
    data,
    rng: np.random.Generator,
    sets: Callable[[float, str], tuple],
    size_of: Callable[[str], int],
    fitted: Callable,
) -> list[dict[str, Any]]:
    """The rows of a sequential cell: per estimator its validation rows (tuned) and one test
    ``accuracy`` row over the draws the cell used, with the stop reason, the anytime-valid
    interval of its mean and, for every compared estimator, the interval of the difference.

    Parameters
    ----------
    spec : JobSpec
        The cell: ``estimators``, ``compare``, ``trials`` (the cap), ``batch``, and the keys of a
        fixed-mode classify job but ``estimator``.
    data : the prepared split (classify.data.prepared)
    rng : numpy.random.Generator
        The cell's job generator.
    sets : callable (σ, part) -> (σ·train X, Y, σ·query X, query y)
    size_of : callable (estimator) -> M, its projections
    fitted : callable (est, rng, d, X, Y) -> fitted parameters (classify.experiment.fitted_params)

    Returns
    -------
    list of dict
    """
    names = tuple(spec["estimators"])
    arms = {name: _arm(spec, data, name, rng, sets, size_of, fitted) for name in names}
    declared = comparisons(names, spec["compare"])
    first = spec["val_trials"] if "sigmas" in spec else None
    result = sequential.sample_until_resolved(
        lambda i, size, live: {
            name: arm[0](i, size) for name, arm in arms.items() if live is None or name in live
        },
        declared,
        cap=spec["trials"],
        batch=spec["batch"],
        first=first,
        question=sequential.BEST,
        groups=reading_groups(declared, tuple(spec["alternatives"])),
    )
    rows: list[dict[str, Any]] = []
    for name, (_, val_rows, base) in arms.items():
        acc = result.values[name]
        mean, se = mean_se(acc)
        own = sequential.interval(acc, result.t_opt)
        row = {**base, "metric": "accuracy", "value": mean, "stderr": se,
               "n_trials": len(acc), "stop": result.reason_of(name), "cs_low": own.low,
               "cs_high": own.high}  # fmt: skip
        for comparison, (ref, other) in declared.items():
            if other == name:
                reading = result.readings[comparison]
                row.update({VERSUS: ref, "diff_low": reading.low, "diff_high": reading.high,
                            "p_anytime": reading.p})  # fmt: skip
        rows.extend(val_rows)
        rows.append(row)
    return rows


def sigma_rows(
    spec: JobSpec,
    data,
    rng: np.random.Generator,
    sets: Callable[[float, str], tuple],
    size_of: Callable[[str], int],
    fitted: Callable,
) -> list[dict[str, Any]]:
    """The rows of a σ-selection cell (``select_sigma``): one estimator over the σ grid
    ``sigma_grid``, its test accuracy read by successive elimination
    (:func:`rfbench.compute.sequential.select_best`): every σ is evaluated on the same draws,
    batch i of the estimator's keyed stream, and a σ whose paired difference to the leading σ
    lies wholly below zero is evaluated no further. One ``accuracy`` row per σ over the draws it
    used, ``stop`` resolved (dropped, or the last one left) or cap, and its anytime-valid
    interval.

    Parameters
    ----------
    spec : JobSpec
        The cell: ``estimator``, ``sigma_grid``, ``trials`` (the cap), ``batch`` and the keys of
        a fixed-mode classify job but ``sigma``.
    data, rng, sets, size_of, fitted
        As for :func:`cell_rows`.

    Returns
    -------
    list of dict
    """
    name, d, size = spec["estimator"], data.d, spec["batch"]
    M = size_of(name)
    est = registry.get(name, kernel=spec["kernel"], m=M)
    own = substream(rng, {"estimator": name})
    dtype = DTYPES[spec["dtype"]]

    fit_sets = partial(fit_on, data, spec["fit"], part="test")
    grid = spec["sigma_grid"]
    params = {s: fitted(est, substream(own, ("fit", "test", s)), d, *fit_sets(s)) for s in grid}
    drawn: dict[int, Any] = {}

    def evaluate(sigma: float, start: int, stop: int) -> np.ndarray:
        i = start // size
        if i not in drawn:  # every σ reads batch i before batch i + 1 is drawn
            drawn.clear()
            batch_rng = substream(own, ("batch", i))
            drawn[i] = est.sample(batch_rng, d, draws=stop - start, fit=fit_sets(grid[0]))
        proj = drawn[i].projections["omega"]
        return rf_accuracies(est, proj, params[sigma], *sets(sigma, "test"), dtype=dtype)

    cap = spec["trials"]
    _, values = sequential.select_best(evaluate, grid, cap, size)
    rows = []
    for sigma in grid:
        acc = values[sigma]
        mean, se = mean_se(acc)
        own_cs = sequential.interval(acc, max(cap / 2.0, 2.0))
        rows.append({"estimator": name, "m": M, "m_per_d": M / d, "sigma": sigma,
                     "metric": "accuracy", "value": mean, "stderr": se, "n_trials": len(acc),
                     "stop": "cap" if len(acc) == cap else "resolved", "cs_low": own_cs.low,
                     "cs_high": own_cs.high})  # fmt: skip
    return rows


def sigma_specs(jobs: list[JobSpec], config: Mapping[str, Any]) -> list[JobSpec]:
    """The fixed-mode jobs of a config gathered into one job per σ-selection cell (an estimator
    over every σ of the config), the exact-kernel jobs kept as they are, in grid order."""
    cells: dict[JobSpec, list[float]] = {}
    out: list[JobSpec | None] = []
    for job in jobs:
        if job["estimator"] not in config["estimators"]:
            out.append(job)
            continue
        key = JobSpec({k: v for k, v in job.items() if k != "sigma"})
        if key not in cells:
            cells[key] = []
            out.append(key)
        cells[key].append(job["sigma"])
    extra = {"batch": config["batch"], "stop": "resolved"}
    return [
        job if job not in cells else JobSpec(job, sigma_grid=cells[job], **extra) for job in out
    ]


def cell_specs(jobs: list[JobSpec], config: Mapping[str, Any]) -> list[JobSpec]:
    """The fixed-mode jobs of a config gathered into one job per cell (every estimator of the
    config), the exact-kernel jobs kept as they are, in grid order."""
    if config["select_sigma"]:
        return sigma_specs(jobs, config)
    out: list[JobSpec] = []
    seen: set[JobSpec] = set()
    extra = {"estimators": list(config["estimators"]), "compare": config["compare"],
             "alternatives": list(config["alternatives"]), "batch": config["batch"],
             "stop": "resolved"}  # fmt: skip
    for job in jobs:
        if job["estimator"] not in config["estimators"]:
            out.append(job)
            continue
        cell = JobSpec({k: v for k, v in job.items() if k not in ("estimator", "rep")}, **extra)
        if cell not in seen:
            seen.add(cell)
            out.append(cell)
    return out
