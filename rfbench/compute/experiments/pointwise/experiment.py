"""Pointwise estimation of one kernel value vs angle and radius (HRF Fig. 2, 5; CSE Figs 1-5;
docs/experiments.md#hrf-fig2, #cse; the parameters' help gives the sizes, variants and options).

For ‖x‖ = ‖y‖ = r at angle θ (x = r e₁, y = r(cos θ e₁ + sin θ e₂)), each estimator is drawn
``samples`` times per angle. Rows per (estimator, r, θ, m, n, variant): the metrics of
:mod:`rfbench.compute.experiments.pointwise.rows` (with ``paired``:
:mod:`rfbench.compute.experiments.pointwise.paired`), and per curve ``neg_count`` (CSE Fig. 4).
Rotation-invariant estimators are sampled in a 2-D frame (exact, docs/architecture.md);
data-dependent ones (GERF/DERF) are fitted on each pair and drawn per angle. The summary ranks by
the closed form where one exists.

On the user's own pairs (``rfbench pointwise --data FILE``): rows (Q[i], K[i]) of an ``.npz``, or
consecutive rows (X[2i], X[2i+1]) of one matrix (:mod:`rfbench.compute.datasets.user`). A
rotation-invariant estimator is sampled on the canonical pair (‖x‖e₁, ‖y‖(cos θ e₁ + sin θ e₂)) in
a 2-D frame, any other on the vectors. Rows carry ``pair_index``, both norms and the angle; ``r``
stays empty (the Gaussian hybrid's normaliser uses the median norm).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.datasets import user
from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.experiments.chunks import CACHE_BYTES, CHUNK_BYTES, chunks
from rfbench.compute.experiments.pointwise import paired as pairing
from rfbench.compute.experiments.pointwise.params import Params
from rfbench.compute.experiments.pointwise.rows import curve_rows
from rfbench.compute.experiments.shared import base_projections
from rfbench.compute.features import registry, theory
from rfbench.compute.features.base import Draw, Estimator
from rfbench.compute.features.theory import equal_norm_pair, negatives
from rfbench.compute.kernels import log_kernel

THEORY_NEG = "theory_neg_fraction"
NEG_COUNT = "neg_count"

#: Columns naming one curve (an estimator at one radius) in the rows.
CURVE = ("estimator", "kernel", "d", "m", "n", "r", "sigma", "variant", "weights")


def parse_estimator(text: str) -> tuple[str, int | None, int | None]:
    """``"name[:m[:n]]"`` -> (name, m, n); sizes are positive integers or absent."""
    name, *sizes = str(text).strip().split(":")
    if not name or len(sizes) > 2 or not all(s.isdigit() and int(s) > 0 for s in sizes):
        raise ConfigError.bad_value(
            "estimators", text, "registry names, optionally 'name:m' or 'name:m:n' (m, n > 0)"
        )
    ints = [int(s) for s in sizes] + [None, None]
    return name, ints[0], ints[1]


def estimator_points(text: str, config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The (estimator, m, n, variant, sigma) points one ``estimators`` entry expands into."""
    name, m_fixed, n_fixed = parse_estimator(text)
    try:
        desc = registry.describe(name)
    except registry.UnknownEstimatorError as exc:  # its message names the estimator
        raise ConfigError(str(exc)) from None
    est = desc.estimator
    bipolar = est.bipolar
    if n_fixed is not None and not bipolar:
        raise ConfigError.bad_value("estimators", text, "n only for angular/gaussian hybrids")
    if est.kind == "hybrid" and not bipolar:
        raise ConfigError.bad_value("estimators", text, "no cluster-hybrid (needs clusters)")
    sigma = config["sigma"] if bipolar and "sigma" in desc.options else None
    for budget in [m_fixed] if m_fixed else config["projection_budget"]:
        if not bipolar:
            yield {"estimator": name, "m": budget, "n": None, "variant": None, "sigma": None}
            continue
        n = n_fixed or config["n"]
        if m_fixed:
            m, n = m_fixed, n or m_fixed
        elif config["flop_match"]:
            m = base_projections(budget, n)  # n <= M: validate_config
        else:
            m, n = budget, n or budget
        variants = [desc.variant] if desc.variant else config["variants"]
        supported = [v for v in variants if v in est.variants]
        if not supported:
            raise ConfigError.bad_value("variants", variants, f"for {name}: {est.variants}")
        for variant in supported:
            yield {"estimator": name, "m": m, "n": n, "variant": variant, "sigma": sigma}


def budgets(config: Mapping[str, Any]) -> dict[tuple[str, int, int], int]:
    """(estimator, m, n) -> budget M of each point whose projections m differ from its budget (a
    FLOP-matched hybrid: m = M // n); the rows of such a point carry ``projection_budget``.

    Raises :class:`ConfigError` when two budgets give a hybrid the same m (the same job twice).
    """
    out: dict[tuple[str, int, int], int] = {}
    for text in config["estimators"]:
        if parse_estimator(text)[1] is not None:  # name:m[:n] fixes m: no budget
            continue
        for budget in config["projection_budget"]:
            for point in estimator_points(text, {**config, "projection_budget": [budget]}):
                key = (point["estimator"], point["m"], point["n"])
                if point["m"] != budget and out.setdefault(key, budget) != budget:
                    raise ConfigError.bad_value(
                        "projection_budget",
                        [out[key], budget],
                        f"budgets that give {key[0]} different "
                        f"m = M // n (both give m = {key[1]} with n = {key[2]})",
                    )
    return out


def make_estimator(spec: Mapping[str, Any]) -> Estimator:
    """The estimator of a job (the gaussian hybrid's normaliser ρ uses the job's radius)."""
    desc = registry.describe(spec["estimator"])
    options: dict[str, Any] = {}
    if spec["variant"] is not None and desc.variant is None:
        options["variant"] = spec["variant"]
    if spec["sigma"] is not None:
        options["sigma"] = spec["sigma"]
    # the user's pairs: their median norm
    if desc.estimator.kind == "hybrid" and "radius" in desc.options:
        options["radius"] = spec["r"] if spec["r"] is not None else spec["radius"]
    return registry.get(
        spec["estimator"], kernel=spec["kernel"], m=spec["m"], n=spec["n"], **options
    )


def draw_estimates(
    est: Estimator,
    x: np.ndarray,
    y: np.ndarray,
    samples: int,
    common: bool,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[np.ndarray], list[Draw]]:
    """(estimates (samples, A), angle groups, the last draw of each group) at pairs (x, y_a)."""
    d = x.shape[-1]
    frame = 2 if est.rotation_invariant and d > 2 else None  # None: the full d
    k = frame or d
    xk, yk = x[:, :k], y[:, :k]
    angles = len(y)
    dependent = est.data_dependent
    groups = [np.arange(angles)] if common and not dependent else np.arange(angles)[:, None]
    width = 8 * (4 * est.m + 2 * (est.n or 0))  # bytes of a point's features
    out = np.empty((samples, angles))
    last: list[Draw] = []
    for g in groups:
        # a draw too large for CHUNK_BYTES (m ~ 10⁶ and more) meets its angles in batches
        batches = np.array_split(g, min(len(g), -(-width * (len(g) + 1) // CHUNK_BYTES)))
        per_draw = width * max(k, len(batches[0]) + 1)
        fit = (xk[g], yk[g]) if dependent else None
        for start, stop in chunks(samples, per_draw, 1.0 / len(groups), CACHE_BYTES):
            draw = est.sample(rng, d=d, draws=stop - start, fit=fit, frame=frame)
            for b in batches:
                out[start:stop, b] = est.estimate(draw, xk[b[:1]], yk[b])[:, 0, :]
        last.append(draw)
    return out, list(groups), last


def theory_mse(
    est: Estimator,
    x: np.ndarray,
    y: np.ndarray,
    groups: list[np.ndarray],
    draws: list[Draw],
) -> np.ndarray | None:
    """Closed-form MSE per angle, or None (no formula, e.g. CSE shared-all)."""
    if not theory.has_theory(est.name):
        return None
    out = np.empty(len(y))
    try:
        for g, draw in zip(groups, draws, strict=True):
            out[g] = theory.mse(est, x[g], y[g], params=draw.params)
    except NotImplementedError:
        return None
    return out


@register_experiment
class Pointwise(Experiment):
    """Relative error of kernel estimators vs θ and r (HRF Sec. 4.1, App. G; CSE Sec. 4)."""

    name = "pointwise"
    description = "relative error of one kernel value vs angle and radius (HRF Fig 2/5, CSE)"
    tagline = "Error of one kernel value vs angle and norm (HRF, CSE)."
    params = Params
    spec_only = True
    profiles = {"quick": {"angles": 5, "samples": 500, "r": [1.0]}, "paper": {}}

    memory_parameters = ("projection_budget", "d", "n", "samples", "angles", "pairs")
    range_parameters = ("r", "sigma")
    probe_overrides = {"samples": 64, "angles": 5}

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """A few chunks of :data:`CHUNK_BYTES`, plus one draw: up to max(M, d)·d projection
        entries (orthogonal blocks are d × d) and their working copies, in float64; plus the
        estimates a job keeps, samples × angles (the user's pairs) per curve of the job (paired:
        every curve of a radius, and their paired differences), a few working copies of one
        angle's samples, with importance a few more."""
        d, big_m = config["d"], max(config["projection_budget"]) * max(config["n"], 1)
        points = config["angles"]
        if config["data"]:  # the user's pairs decide d and the points
            rows, d = user.declared_shape(config["data"])
            points = min(config["pairs"], rows)
        curves = 1
        if config["paired"]:
            curves = 4 * len(config["estimators"]) * len(config["variants"])
            curves *= len(config["projection_budget"])
        per_sample = points * curves + 8 + (16 if config["importance"] else 0)
        draw = 3 * max(big_m, d) * d + 8 * big_m
        return 4 * CHUNK_BYTES + 8 * (draw + config["samples"] * per_sample)

    def validate_config(self, config: Mapping[str, Any]) -> None:
        n = config["n"]
        if config["flop_match"] and not 0 < n <= min(config["projection_budget"]):
            raise ConfigError.bad_value(
                "n", n, "0 <= n, and 0 < n <= min(projection_budget) with flop_match"
            )
        if config["data"]:
            if config["paired"]:
                raise ConfigError.bad_value("paired", True, "false with data (not supported yet)")
            load_pairs(config["data"], config["pairs"])  # a one-line DataError if unusable
        budgets(config)  # two budgets giving a hybrid the same m are an error
        if config["reference"] and config["reference"] not in config["estimators"]:
            raise ConfigError.bad_value("reference", config["reference"], "an estimators entry")
        for spec in self._points(config):
            try:
                make_estimator(spec)
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"estimator {spec['estimator']!r}: {exc}") from None

    def _points(self, config: Mapping[str, Any]) -> list[JobSpec]:
        """One spec per curve (an estimator point at one radius)."""
        fixed = {k: config[k] for k in ("kernel", "d", "angles", "samples", "common_draws")}
        if config["importance"]:  # only when set, so the keys (and seeds) of other runs stay
            fixed["importance"] = True
        if config["tail"]:  # likewise
            fixed["tail"] = float(config["tail"])
        if config["data"]:  # the user's pairs replace the (r, θ) grid
            x, _ = load_pairs(config["data"], config["pairs"])
            radius = float(np.median(np.linalg.norm(x, axis=1)))
            fixed.update(data=config["data"], pairs=len(x), d=x.shape[1], radius=radius)
            fixed["common_draws"] = False
        return [
            JobSpec(**fixed, r=r, **point)
            for r in ([None] if config["data"] else config["r"])
            for text in config["estimators"]
            for point in estimator_points(text, config)
        ]

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        points = self._points(config)
        if not config["paired"]:
            return points
        reference = config["reference"] or config["estimators"][0]
        jobs = []
        for r in config["r"]:
            curves = [p for p in points if p["r"] == r]
            shared = {k: v for k, v in curves[0].items() if k not in pairing.POINT}
            rows = tuple(tuple(p[k] for k in pairing.POINT) for p in curves)
            jobs.append(JobSpec(shared, points=rows, reference=reference))
        return jobs

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        if "data" in spec:
            x, y = load_pairs(spec["data"], spec["pairs"])
            thetas, extra = angles(x, y), pair_columns(x, y)
        else:
            thetas, extra = np.linspace(0.0, np.pi, spec["angles"]), None
            x, y = equal_norm_pair(spec["r"], thetas, spec["d"])
        true = np.exp(log_kernel(spec["kernel"], x[:, None], y[:, None])[:, 0, 0])
        specs = pairing.curve_specs(spec) if "points" in spec else [spec]
        ests = [make_estimator(s) for s in specs]
        paired = "points" in spec
        shared = pairing.paired_estimates(ests, x, y, spec["samples"], rng) if paired else {}
        rows, values, bases, flags = [], [], [], []
        for i, (one, est) in enumerate(zip(specs, ests, strict=True)):
            if extra is not None:
                x, y = inputs_for(est, *load_pairs(spec["data"], spec["pairs"]))
            if i in shared:  # the same laws; only the joint law across estimators changes
                draws = (shared[i][0], [np.arange(len(y))], [shared[i][1]])
            else:
                draws = draw_estimates(est, x, y, one["samples"], one["common_draws"], rng)
            mse = theory_mse(est, x, y, draws[1], draws[2])
            base = {k: one[k] for k in CURVE if k in one}
            if "omega" in draws[2][0].projections:  # the rows drawn (e.g. sgq fixes their number)
                base["m"] = draws[2][0].projections["omega"].count
            base["weights"] = est.weights_name
            is_draws = one["samples"] if one.get("importance") else 0
            curve = curve_rows(
                est, base, x, y, true, thetas, draws, mse, is_draws, rng, extra, one.get("tail", 0)
            )
            flags.append([row["resolved"] for row in curve if row["metric"] == "mse"])
            rows += curve
            values.append(draws[0])
            bases.append(base)
        if paired:
            rows += pairing.diff_rows(bases, values, flags, true, thetas, spec["reference"])
        return rows

    def finalize(self, rows: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
        """Append per angle ``theory_neg_fraction`` where a closed form exists and per curve
        ``neg_count`` = Σ_θ neg_fraction·n_trials (CSE Fig. 4) and, for
        unpaired runs, ``diff_mse`` against ``reference`` with independent standard errors; a
        FLOP-matched hybrid's rows carry their ``projection_budget`` M (their ``m`` is M // n)."""
        rows = _neg_counts(_theory_negatives(rows))
        if not config["paired"] and len(config["estimators"]) >= 2:
            diffs = pairing.unpaired_diffs(rows, config["reference"] or config["estimators"][0])
            rows = pd.concat([rows, diffs], ignore_index=True) if len(diffs) else rows
        return _with_budgets(rows, budgets(config))


def _with_budgets(rows: pd.DataFrame, found: Mapping[tuple[str, int, int], int]) -> pd.DataFrame:
    """``rows`` with a ``projection_budget`` column where a row's point has one
    (:func:`budgets`)."""
    if not found or "n" not in rows.columns:
        return rows
    point = zip(rows["estimator"], rows["m"], rows["n"], strict=True)
    values = [found.get((e, int(m), int(n))) if pd.notna(m) and pd.notna(n) else None
              for e, m, n in point]  # fmt: skip
    return rows.assign(projection_budget=pd.array(values, dtype="Int64"))


def _theory_negatives(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``theory_neg_fraction`` (the exact P(K̂ < 0) of
    :func:`~rfbench.compute.features.theory.negatives.negative_fraction`) beside each
    ``neg_fraction`` row of an estimator that has one."""
    neg = rows[rows["metric"] == "neg_fraction"]
    parts = []
    for (est, m, r), group in neg.groupby(["estimator", "m", "r"], sort=False):
        exact = negatives.negative_fraction(str(est), group["theta"].to_numpy(float), int(m), r)
        if exact is not None:
            parts.append(group.assign(metric=THEORY_NEG, value=exact, stderr=np.nan, n_trials=0))
    return pd.concat([rows, *parts], ignore_index=True) if parts else rows


def _neg_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with per curve ``neg_count`` = Σ_θ neg_fraction·n_trials appended."""
    neg = rows[rows["metric"] == "neg_fraction"]
    if neg.empty:
        return rows
    keys = [c for c in (*CURVE, "experiment", "figure") if c in rows.columns]
    p, n = neg["value"].to_numpy(float), neg["n_trials"].to_numpy(float)
    counts = neg[keys].assign(value=np.round(p * n), var=n * p * (1 - p), n_trials=n)
    out = counts.groupby(keys, dropna=False, sort=False).sum().reset_index()
    out = out.assign(stderr=np.sqrt(out.pop("var")), metric=NEG_COUNT, theta=np.nan, resolved=True)
    return pd.concat([rows, out], ignore_index=True)


def load_pairs(name: str, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``limit`` pairs (x_i, y_i) of a point file, as two (P, d) arrays."""
    Q, K = user.load_points(name)
    if Q is K:  # a single matrix X: consecutive rows pair up
        Q, K = Q[0 : len(Q) - 1 : 2], Q[1::2]
    if len(Q) != len(K):
        raise user.DataError(f"data file {name}: Q has {len(Q)} rows but K has {len(K)}")
    if len(Q) == 0:
        raise user.DataError(f"data file {name}: no pairs (a single row)")
    return Q[:limit], K[:limit]


def angles(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The angle θ_i between x_i and y_i (0 where either is zero)."""
    nx, ny = np.linalg.norm(x, axis=1), np.linalg.norm(y, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.einsum("ij,ij->i", x, y) / (nx * ny)
    return np.arccos(np.clip(np.nan_to_num(cos, nan=1.0), -1.0, 1.0))


def canonical(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs with the same norms and angles, in the span of e₁, e₂."""
    theta = angles(x, y)
    cx, cy = np.zeros_like(x), np.zeros_like(y)
    cx[:, 0] = np.linalg.norm(x, axis=1)
    ny = np.linalg.norm(y, axis=1)
    cy[:, 0], cy[:, 1] = ny * np.cos(theta), ny * np.sin(theta)
    return cx, cy


def inputs_for(est: Estimator, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs an estimator is sampled on: canonical if rotation-invariant, else as given."""
    return canonical(x, y) if est.rotation_invariant and x.shape[1] > 2 else (x, y)


def pair_columns(x: np.ndarray, y: np.ndarray) -> list[dict[str, float | int]]:
    """Per pair: its index and both norms (merged into that pair's rows)."""
    nq, nk = np.linalg.norm(x, axis=1), np.linalg.norm(y, axis=1)
    return [
        {"pair_index": i, "norm_q": float(nq[i]), "norm_k": float(nk[i])} for i in range(len(x))
    ]
