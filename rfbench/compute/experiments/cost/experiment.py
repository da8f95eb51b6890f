"""Error against wall time and FLOPs, and where random features beat exact attention (beyond the
papers); the metrics are described where they are registered below, the FLOPs in
:mod:`~rfbench.compute.experiments.cost.model`.

- ``frontier`` (estimator, M): N queries and N keys of norm r in random directions of R^d; draw
  (with its fit), both feature maps and the Gram product ΦΨᵀ timed per step (``time_s``: the
  least-disturbed of ``repeats`` runs; the total is their sum), and the error.
- ``crossover`` (estimator, d): the error at the budget M₀ = ``crossover_projection_budget``,
  the budget M(ε) = M₀·(err/ε)² for the target ε (MSE ∝ 1/M: exact for i.i.d. projections, an
  approximation otherwise) and the length L* above which RF attention with M(ε) needs fewer FLOPs
  than exact (d_v = d).
- Rows: ``m`` is the projections of the row's estimator; a hybrid's rows (m = M // n per base)
  also carry ``projection_budget`` = M (:func:`~rfbench.compute.experiments.shared.sized`).
- ``projection`` (Hadamard coupling, d): ωᵀx for m = d′ timed by the structured transform and by
  the dense product (docs/architecture.md#structured-projections).

Timings measure this machine under its load: never compare them through the job cache (rerun with
``--force``). Errors and FLOPs are deterministic given the seed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.experiments.cost import model as cm
from rfbench.compute.experiments.cost.params import Params
from rfbench.compute.experiments.shared import best_time, make, random_directions, sized, widest
from rfbench.compute.features import theory
from rfbench.compute.features.base import Estimator
from rfbench.compute.features.registry import make_weights, weights_samplers
from rfbench.compute.features.weights import hadamard
from rfbench.compute.kernels import softmax_kernel
from rfbench.compute.stats import standard_error

FLOPS = "flops"
RMS = "rms_rel_frob"
THEORY_RMS = "theory_rms_rel_frob"
M_NEEDED = "m_needed"
CROSSOVER = "crossover_L"
WIDTH = "features_per_point"
STEPS = ("draw", "features", "gram")
PROJECTION_STEPS = ("structured", "dense")
FAST_KERNEL = "fht_cpu"


def errors(
    est: Estimator, X: np.ndarray, Y: np.ndarray, samples: int, rng: np.random.Generator
) -> dict[str, float]:
    """RMS relative Frobenius error: name -> (value, standard error), empirical (``samples``
    draws, se by the delta method) and in closed form if rfbench has one."""
    K = softmax_kernel(X, Y)
    norm = np.linalg.norm(K)
    draw = est.sample(rng, d=X.shape[1], draws=samples, fit=(X, Y))
    sq = ((est.estimate(draw, X, Y) - K) ** 2).sum(axis=(1, 2))
    rms = np.sqrt(sq.mean())
    se = standard_error(sq, axis=0) / (2 * rms) if rms > 0 else 0.0  # delta method
    out = {RMS: (float(rms / norm), float(se / norm))}
    if theory.has_theory(est.name):
        params = draw.params if est.data_dependent else None
        mse = theory.mse(est, X[:, None, :], Y[None, :, :], params=params)
        out[THEORY_RMS] = (float(np.sqrt(mse.sum()) / norm), None)
    return out


def timed(est: Estimator, X: np.ndarray, Y: np.ndarray, repeats: int, rng: np.random.Generator):
    """(min time per step over ``repeats`` and their sum, the last draw, the feature width)."""
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        draw = est.sample(rng, d=X.shape[1], draws=1, fit=(X, Y))
        t1 = time.perf_counter()
        phi, psi = est.query_features(draw, X), est.key_features(draw, Y)
        t2 = time.perf_counter()
        gram = phi @ np.swapaxes(psi, -1, -2)
        _ = gram.real if np.iscomplexobj(gram) else gram
        t3 = time.perf_counter()
        runs.append((t1 - t0, t2 - t1, t3 - t2))
    best = dict(zip(STEPS, np.min(np.array(runs), axis=0).tolist(), strict=True))
    best["total"] = sum(best.values())  # the least-disturbed time of each step, added
    return best, draw, est.feature_width(draw, X)


def _error_rows(err: dict[str, Any], samples: int) -> list[dict[str, Any]]:
    """The rows of :func:`errors` (a closed form has no draws)."""
    return [{"metric": k, "value": v, "stderr": se, "n_trials": 0 if "theory" in k else samples}
            for k, (v, se) in err.items()]  # fmt: skip


def _inputs(spec: JobSpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """N queries and N keys of norm r in random directions of R^d."""
    d, N, r = spec["d"], spec["points"], spec["r"]
    return random_directions(rng, N, d, r), random_directions(rng, N, d, r)


def _frontier(est: Estimator, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    d, N = spec["d"], spec["points"]
    X, Y = _inputs(spec, rng)
    times, draw, width = timed(est, X, Y, spec["repeats"], rng)
    counts = cm.projections(draw)
    flops = {
        "draw": cm.draw_flops(est, counts, d, N),
        "features": 2 * N * cm.feature_flops(est, counts, d, width),
        "gram": 2.0 * N * N * width,  # Φ Ψᵀ
    }
    flops["total"] = sum(flops.values())
    rows = [
        {"step": s, "metric": k, "value": v[s], "n_trials": spec["repeats"] if k == "time_s" else 0}
        for s in times
        for k, v in (("time_s", times), (FLOPS, flops))
    ]
    rows.append({"step": None, "metric": WIDTH, "value": float(width),
                 "n_trials": 0})  # fmt: skip
    err = errors(est, X, Y, spec["samples"], rng)
    return rows + [{"step": None, **row} for row in _error_rows(err, spec["samples"])]


def _crossover(est: Estimator, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    d, target = spec["d"], spec["target"]
    X, Y = _inputs(spec, rng)
    err = errors(est, X, Y, spec["samples"], rng)
    used = err.get(THEORY_RMS, err[RMS])[0]
    draw = est.sample(rng, d=d, draws=1, fit=(X, Y))
    width = est.feature_width(draw, X)
    scale = max((used / target) ** 2, 1.0 / spec["m"])  # at least one projection
    counts = [c * scale for c in cm.projections(draw)]
    draw0 = cm.draw_flops(est, counts, d, 0)
    fit_rate = cm.draw_flops(est, counts, d, 1) - draw0
    per_point = cm.feature_flops(est, counts, d, width * scale)
    L = cm.crossover_length(d, d, draw0, per_point, width * scale, fit_rate)
    rows = _error_rows(err, spec["samples"])
    rows.append({"metric": M_NEEDED, "value": float(math.ceil(spec["m"] * scale)), "n_trials": 0})
    rows.append({"metric": CROSSOVER, "value": L, "n_trials": 0})
    return [{**row, "target": target} for row in rows]


def _projection(spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Structured vs dense projection time of one Hadamard coupling in R^d (m = d′)."""
    d = spec["d"]
    m = 1 << (d - 1).bit_length()
    proj = make_weights(spec["weights"]).sample(rng, d, m, 1)
    X = random_directions(rng, spec["points"], d, spec["r"])
    times = {
        "structured": best_time(lambda: proj.with_fast(True).project(X), spec["repeats"]),
        "dense": best_time(lambda: proj.with_fast(False).project(X), spec["repeats"]),
    }
    rows = [{"step": s, "metric": "time_s", "value": times[s], "n_trials": spec["repeats"]}
            for s in PROJECTION_STEPS]  # fmt: skip
    rows.append({"step": "structured", "metric": FAST_KERNEL,
                 "value": float(hadamard.HAVE_FHT_CPU), "n_trials": 0})  # fmt: skip
    return [{**row, "m": m} for row in rows]


@register_experiment
class Cost(Experiment):
    """Error vs time and FLOPs per estimator; the crossover length of RF attention vs d."""

    name = "cost"
    description = "error vs wall time and FLOPs, and the L where RF attention beats exact"
    tagline = "Error vs wall time and FLOPs; where RF attention beats exact."
    params = Params
    spec_only = True
    profiles = {
        "quick": {
            "projection_budget": [16, 64],
            "points": 64,
            "samples": 5,
            "repeats": 2,
            "crossover_d": [16, 64],
            "crossover_points": 32,
            "projection_d": [32, 256],
            "projection_points": 128,
        },  # fmt: skip
        "paper": {},
    }

    memory_parameters = ("points", "projection_budget", "samples", "d", "crossover_points",
                         "crossover_projection_budget", "crossover_d", "projection_points",
                         "projection_d")  # fmt: skip

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """The largest job in float64: a frontier or crossover job holds the closed form's N × N
        × d broadcast of the pairs (twice), ``samples`` Gram estimates N × N and feature maps
        N × width (three copies each, both sides), and the draws' projections; a projection job
        holds X (P × d), its output and working copy (P × d′, d′ ≤ 2d) and the weights."""

        def error_job(points: int, m: int, d: int) -> int:
            width, projections = widest(config["estimators"], m, config["n"], matched=True)
            s, pairs = config["samples"], points * points
            features = 6 * s * points * width + 3 * s * projections * d
            return 8 * (2 * pairs * d + 3 * s * pairs + features + 4 * points * d)

        jobs = [
            error_job(config["points"], max(config["projection_budget"]), config["d"]),
            error_job(
                config["crossover_points"],
                config["crossover_projection_budget"],
                max(config["crossover_d"]),
            ),
        ]
        if config["projection_weights"] and config["projection_d"]:
            p, d = config["projection_points"], max(config["projection_d"])
            jobs.append(8 * (p * d + 3 * p * 2 * d + 3 * 2 * d * d))
        return max(jobs)

    def validate_config(self, config: Mapping[str, Any]) -> None:
        # the couplings applied as Hadamard chains (they expose ``chain``)
        structured = [n for n, cls in weights_samplers().items() if hasattr(cls, "chain")]
        for name in config["projection_weights"]:
            if name not in structured:
                raise ConfigError.bad_value(
                    "projection_weights", name, f"a structured coupling ({', '.join(structured)})"
                )
        for name in config["estimators"]:
            try:
                make(name, config["projection_budget"][0], config["n"])
            except (ValueError, TypeError, KeyError) as exc:
                raise ConfigError(f"estimator {name!r}: {exc}") from None  # e.g. no softmax kernel

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        common = {k: config[k] for k in ("n", "r", "samples")}
        frontier = {**common, "part": "frontier", "d": config["d"], "points": config["points"]}
        crossover = {**common, "part": "crossover", "points": config["crossover_points"]}
        projection = {"part": "projection", "r": config["r"], "points": config["projection_points"]}
        # a job's key keeps the name m for M: the same seeds and cached rows
        jobs = [
            JobSpec(frontier, estimator=e, m=budget, repeats=config["repeats"])
            for e in config["estimators"]
            for budget in config["projection_budget"]
        ]
        at = {"m": config["crossover_projection_budget"], "target": config["target"]}
        jobs += [
            JobSpec(crossover, estimator=e, d=d, **at)
            for e in config["estimators"]
            for d in config["crossover_d"]
        ]
        return jobs + [
            JobSpec(projection, weights=w, d=d, repeats=config["repeats"])
            for w in config["projection_weights"]
            for d in config["projection_d"]
        ]

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> pd.DataFrame:
        if spec["part"] == "projection":  # a coupling's timing: it names the rows
            out, size, weights = pd.DataFrame(_projection(spec, rng)), {}, spec["weights"]
        else:
            est = make(spec["estimator"], spec["m"], spec["n"])
            size, weights = sized(est, spec["m"]), est.weights_name
            part = _frontier if spec["part"] == "frontier" else _crossover
            try:
                out = pd.DataFrame(part(est, spec, rng))
            except cm.NoCostModel as exc:  # the estimator cannot say what it costs: say so
                out = pd.DataFrame([{"metric": "skipped", "value": 1.0, "n_trials": 0,
                                     "note": f"no FLOP model: {exc}"}])  # fmt: skip
        out["stderr"] = out.get("stderr", pd.Series(np.nan, index=out.index)).astype(float)
        return out.assign(
            part=spec["part"], estimator=spec.get("estimator", weights), kernel="softmax",
            d=spec["d"], points=spec["points"], **size, r=spec["r"], weights=weights,
        )  # fmt: skip
