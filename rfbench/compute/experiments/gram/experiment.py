"""Gram- and attention-matrix error over repeated draws (docs/experiments.md#simrf-fig7,
#spectraformer-grid, #vrc-kernel, #beyond-nystrom).

The points come from the fixed ``data_seed``; the job's generator draws only the features, shared by
the kernels of a cell. Each metric is a mean over ``reps`` draws ± std/√reps with a ``resolved``
flag (rfbench.compute.features.theory.resolution, k = 2). A kernel that cannot be estimated gives
one ``skipped`` row with the reason in ``note``: the grid never stops.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rfbench.compute.datasets import DataError, user
from rfbench.compute.datasets.registry import get as dataset_info
from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.base import ConfigError, DataFile, Experiment, JobSpec
from rfbench.compute.experiments.chunks import CHUNK_BYTES, chunks
from rfbench.compute.experiments.gram.params import Params
from rfbench.compute.experiments.shared import row
from rfbench.compute.features import registry, theory
from rfbench.compute.features.base import Draw, Estimator
from rfbench.compute.features.theory import resolution
from rfbench.compute.kernels import kernel_matrix
from rfbench.compute.stats import mean_se

_FAILURES = (ValueError, ArithmeticError, NotImplementedError)


def expand_estimators(patterns: Sequence[str]) -> list[str]:
    """Names with ``*`` wildcards expanded over every registered component@weights, in order."""
    described = map(registry.describe, registry.estimator_names())
    pool = [d.name for d in described if not d.alias and d.estimator.kind == "component"]
    out: list[str] = []
    for pattern in patterns:
        found = fnmatch.filter(pool, pattern) if "*" in pattern else [pattern]
        out += [name for name in found if name not in out]
    return out


def dataset_points(name: str, n: int, seed: int) -> np.ndarray:
    """``n`` rows (all if fewer) of the registry data set ``name``, z-scored over the whole set
    (population std; constant columns left at 0), drawn without replacement by ``seed``."""
    from rfbench.compute.datasets import load
    from rfbench.compute.datasets.preprocess import zscore_stats

    X = load(name).X
    mean, std, _ = zscore_stats(X)
    rows = np.random.default_rng(seed).permutation(len(X))[: min(n, len(X))]
    return (X[np.sort(rows)] - mean) / std


def lengthscale_rule(Z: np.ndarray) -> float:
    """σ = 1/(2 × mean pairwise distance) of the points (VRC authors' fixed-lengthscale rule)."""
    sq = np.sum(Z**2, axis=1)
    dist = np.sqrt(np.maximum(sq[:, None] + sq[None] - 2 * Z @ Z.T, 0.0))
    n = len(Z)
    mean = dist.sum() / (n * (n - 1)) if n > 1 else 1.0
    return float(1.0 / (2.0 * mean)) if mean > 0 else 1.0


def make_inputs(spec: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) of a job: σZ twice (self) or (r/√d)(Z_q, Z_k) (attention), Z from ``data_seed``;
    the user's points (file: Q and K, or X twice; see :mod:`rfbench.compute.datasets.user`); σ times
    a data set's z-scored rows (dataset; σ = 0: :func:`lengthscale_rule`)."""
    if spec["inputs"] == "file":
        return user.load_points(spec["data"])
    if spec["inputs"] == "dataset":
        Z = dataset_points(spec["dataset"], spec["n_points"], spec["data_seed"])
        X = (spec["sigma"] or lengthscale_rule(Z)) * Z
        return X, X
    d, n = spec["d"], spec["n_points"]
    gen = np.random.default_rng(spec["data_seed"])
    if spec["inputs"] == "self":
        X = spec["sigma"] * gen.standard_normal((n, d))
        return X, X
    Z = gen.standard_normal((2, n, d)) * (spec["r"] / np.sqrt(d))
    return Z[0], Z[1]


def _feature_count(est: Estimator, draw: Draw, X: np.ndarray) -> int:
    """The estimator's feature count (:meth:`Estimator.feature_width`), 0 if it cannot map X."""
    try:
        return est.feature_width(draw, X)
    except (NotImplementedError, AttributeError, ValueError):
        return 0


def _tail_energy(K: np.ndarray, rank: int) -> float:
    """Σ (K − K_r)² of the best rank-``rank`` approximation: the squared singular values beyond it
    (Eckart–Young; eigenvalues of a symmetric K)."""
    if rank <= 0:
        return float(np.sum(K**2))
    s = _singular_values(K.shape, K.dtype.str, np.ascontiguousarray(K).tobytes())
    return float(np.sum(s[rank:] ** 2))


@functools.lru_cache(maxsize=8)
def _singular_values(shape: tuple[int, ...], dtype: str, data: bytes) -> np.ndarray:
    """The singular values of the matrix ``data`` (largest first), per process: every estimator
    of a run meets the same few exact matrices (one per input and kernel), and a range probe's
    are inherited by the workers forked after it. The values of a fresh evaluation, bit for
    bit (read-only)."""
    K = np.frombuffer(data, dtype=dtype).reshape(shape).copy()  # numpy's own aligned memory
    sym = K.shape[0] == K.shape[1] and np.allclose(K, K.T)
    s = np.abs(np.linalg.eigvalsh(K)) if sym else np.linalg.svd(K, compute_uv=False)
    s = np.sort(s)[::-1]
    s.setflags(write=False)
    return s


def _sizes(config: Mapping[str, Any], d: int) -> list[int]:
    """Projections per job: ``m_per_d`` · d when given (distinct, ≥ 1), else ``m``."""
    if config["m_per_d"] == [0.0]:
        return list(config["m"])
    return list(dict.fromkeys(max(1, round(f * d)) for f in config["m_per_d"]))


def _scale(inputs: str) -> str | None:
    """The parameter that scales synthetic inputs (none for the user's own points)."""
    return {"self": "sigma", "attention": "r", "dataset": "sigma"}.get(inputs)


def _attention(K: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return K / K.sum(axis=-1, keepdims=True)


def _sq_error(est: np.ndarray, true: np.ndarray) -> np.ndarray:
    """‖est - true‖_F² per draw (est: (draws, N, N')), squared in place; ‖est - true‖_F/‖true‖_F
    is its square root over Σ true² (computed once per cell)."""
    diff = est - true
    np.square(diff, out=diff)
    return np.sum(diff, axis=(-2, -1))


def theory_frob_sq(est: Estimator, X: np.ndarray, Y: np.ndarray, draw: Draw) -> float | None:
    """Σ_ij MSE(x_i, y_j) from the closed forms (None if there is none), rows in chunks."""
    if not theory.has_theory(est.name):
        return None
    step = max(1, int(2e5 // Y.size))
    try:
        return float(
            sum(
                np.sum(theory.mse(est, X[i : i + step, None], Y[None], params=draw.params))
                for i in range(0, len(X), step)
            )
        )
    except NotImplementedError:
        return None


class _Cell:
    """Per-draw errors of one (estimator, kernel) cell, accumulated over chunks of draws."""

    def __init__(self, est: Estimator, K: np.ndarray, attention: bool) -> None:
        self.est, self.K = est, K
        self.K_sq = np.sum(K**2)
        self.A = _attention(K) if attention else None
        self.A_sq = np.sum(self.A**2) if attention else None
        self.errors: dict[str, list[np.ndarray]] = {"frob_sq": [], "rel_frob": []}
        if attention:
            self.errors["attn_rel_frob"] = []

    def add(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> None:
        K_hat = self.est.estimate(draw, X, Y)
        frob_sq = _sq_error(K_hat, self.K)
        self.errors["frob_sq"].append(frob_sq)
        self.errors["rel_frob"].append(np.sqrt(frob_sq / self.K_sq))
        if self.A is not None:
            attn_sq = _sq_error(_attention(K_hat), self.A)
            self.errors["attn_rel_frob"].append(np.sqrt(attn_sq / self.A_sq))


def _draw_bytes(spec: Mapping[str, Any], kernels: int) -> int:
    """Bytes of one draw: features (≤ 4m wide, complex) of both sides plus the N×N' estimates."""
    n, d, m = spec["n_points"], spec["d"], spec["m"]
    return 16 * (4 * m * 2 * n + (3 + kernels) * n * n + m * d)


def _stats(values: np.ndarray) -> tuple[float, float | None, int, str | None]:
    ok = np.isfinite(values)
    v, note = values[ok], None
    if not ok.all():
        note = f"{int((~ok).sum())} of {values.size} draws non-finite (row sum of K̂ = 0)"
    if v.size == 0:
        return float("nan"), None, 0, note
    return (*mean_se(v), int(v.size), note)


@register_experiment
class Gram(Experiment):
    """Gram-matrix (and attention-matrix) errors of estimators over repeated draws."""

    name = "gram"
    description = "Gram/attention matrix error vs closed form (SimRF Fig. 7; Spectraformer grid)"
    tagline = "Gram and attention matrix error vs closed form (SimRF)."
    params = Params
    spec_only = True
    profiles = {"quick": {"m": [64, 128], "reps": 200}, "paper": {}}
    #: ``--data`` holds the points; they cost N² per draw, so its default is the quick profile's
    #: repetitions (standard errors about √5 larger than the paper's 1000)
    data_file = DataFile(sets={"inputs": "file"}, defaults={"reps": 200})

    memory_parameters = ("n_points", "m", "d", "reps")
    range_parameters = ("sigma", "r")
    probe_overrides = {"reps": 2}

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """The exact and estimated N × N matrices with working copies, N × 2M features and one
        draw's max(M, d) × d projections, in float64, beside a few chunks of draws; and the
        per-draw errors kept for the statistics (three per draw and kernel, with the copies that
        join their chunks)."""
        n, d, big_m = config["n_points"], config["d"], max(config["m"])
        if config["data"]:  # the user's points decide N and d
            n, d = user.declared_shape(config["data"])
        per_draw = 8 * 8 * config["reps"] * len(config["kernels"])
        return 4 * CHUNK_BYTES + 8 * (4 * n * n + 8 * n * big_m + 3 * max(big_m, d) * d) + per_draw

    def validate_config(self, config: Mapping[str, Any]) -> None:
        if (config["inputs"] == "file") != bool(config["data"]):
            raise ConfigError.bad_value("data", config["data"], "a file exactly when inputs = file")
        if config["data"]:
            user.load_points(config["data"])  # a one-line DataError if unusable
        if (config["inputs"] == "dataset") != bool(config["dataset"]):
            raise ConfigError.bad_value(
                "dataset", config["dataset"], "data set names exactly when inputs = dataset"
            )
        for name in config["dataset"]:
            try:
                dataset_info(name)
            except DataError as exc:
                raise ConfigError(str(exc)) from None
        if 0.0 in config["sigma"] and config["inputs"] != "dataset":  # 0: the lengthscale rule
            raise ConfigError.bad_value("sigma", 0.0, "positive numbers (0 with inputs = dataset)")
        for pattern in config["estimators"]:
            names = expand_estimators([pattern])
            if not names:
                raise ConfigError.bad_value("estimators", pattern, "a pattern matching a name")
            try:
                registry.get(names[0], m=1)
            except registry.UnknownEstimatorError as exc:
                raise ConfigError(str(exc)) from None
            except _FAILURES:
                pass  # a known name that needs another kernel or options: a skipped cell

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        scale = _scale(config["inputs"])
        common = {k: config[k] for k in ("inputs", "d", "n_points", "reps", "data_seed")}
        sources = [common]
        if config["inputs"] == "file":
            X, _ = user.load_points(config["data"])
            common.update(data=config["data"], d=X.shape[1], n_points=len(X), data_seed=0)
        if config["inputs"] == "dataset":
            sources = [
                {**common, "dataset": name, "d": Z.shape[1], "n_points": len(Z)}
                for name in config["dataset"]
                for Z in [dataset_points(name, config["n_points"], config["data_seed"])]
            ]
        return [
            JobSpec(source, estimator=e, kernels=tuple(config["kernels"]), m=m, **point)
            for source in sources
            for e in expand_estimators(config["estimators"])
            for m in _sizes(config, source["d"])
            for point in ([{scale: s} for s in config[scale]] if scale else [{}])
        ]

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        X, Y = make_inputs(spec)
        scale = _scale(spec["inputs"])
        base = {k: spec[k] for k in ("estimator", "d", "m", "n_points", "inputs", "data_seed")}
        if scale:
            base[scale] = spec[scale]
        if spec["inputs"] in ("file", "dataset"):
            base["dataset"] = spec["data"] if spec["inputs"] == "file" else spec["dataset"]
        cells: dict[str, _Cell] = {}
        failures: dict[str, str] = {}
        for kernel in spec["kernels"]:
            try:
                est = registry.get(spec["estimator"], kernel=kernel, m=spec["m"])
                cells[kernel] = _Cell(est, kernel_matrix(kernel, X, Y), scale != "sigma")
            except _FAILURES as exc:
                failures[kernel] = f"{type(exc).__name__}: {exc}"
        first: Draw | None = None
        for start, stop in chunks(spec["reps"], _draw_bytes(spec, len(cells))):
            if not cells:
                break
            size = stop - start
            sampler = next(iter(cells.values())).est
            try:
                draw = sampler.sample(rng, d=spec["d"], draws=size, fit=(X, Y))
            except _FAILURES as exc:
                failures.update({k: f"{type(exc).__name__}: {exc}" for k in cells})
                cells = {}
                break
            if first is None:
                first = draw
            for kernel in list(cells):
                try:
                    cells[kernel].add(draw, X, Y)
                except _FAILURES as exc:
                    failures[kernel] = f"{type(exc).__name__}: {exc}"
                    del cells[kernel]
        if first is not None:
            base["projections"] = first.projections[next(iter(first.projections))].count
            base["features"] = _feature_count(next(iter(cells.values())).est, first, X)
        if spec["inputs"] == "dataset":
            Z = dataset_points(spec["dataset"], spec["n_points"], spec["data_seed"])
            base["input_scale"] = float(np.linalg.norm(X[0]) / np.linalg.norm(Z[0]))
        rows = [row("skipped", 1.0, **base, kernel=k, note=why) for k, why in failures.items()]
        for kernel, cell in cells.items():
            rows += self._cell_rows(base, kernel, cell, X, Y, first)
        return rows

    @staticmethod
    def _cell_rows(base, kernel, cell: _Cell, X, Y, draw: Draw) -> list[dict[str, Any]]:
        entries = X.shape[0] * Y.shape[0]
        errors = {k: np.concatenate(v) for k, v in cell.errors.items()}
        errors["frob_sq_per_entry"] = errors["frob_sq"] / entries
        rows = []
        for metric in ("frob_sq", "frob_sq_per_entry", "rel_frob", "attn_rel_frob"):
            if metric in errors:
                value, se, n, note = _stats(errors[metric])
                ok = resolution.pairs_resolved(cell.est, X, Y, n, 2, draw.params) if n else None
                rows.append(
                    row(metric, value, se, n, **base, kernel=kernel, note=note, resolved=ok)
                )
        if "features" in base:
            tail = _tail_energy(cell.K, base["features"]) / entries
            bound = {
                "note": "bound: best rank-r approximation of the exact matrix",
                "resolved": True,
            }
            rows.append(row("oracle_frob_sq_per_entry", tail, **base, kernel=kernel, **bound))
        expected = theory_frob_sq(cell.est, X, Y, draw)
        if expected is not None:
            for metric, value in (
                ("theory_frob_sq", expected),
                ("theory_frob_sq_per_entry", expected / entries),
            ):
                rows.append(row(metric, value, **base, kernel=kernel, note=None, resolved=True))
        return rows
