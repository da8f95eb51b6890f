"""HRF Table 1: hybrids vs QMC and structured baselines on data pairs
(docs/experiments.md#hrf-table1, docs/methods.md#hrf-erratum-22); values are raw MSEs (``summary``
scales to the paper's 10⁻³).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.experiments.chunks import CHUNK_BYTES, chunk_size, chunks
from rfbench.compute.experiments.params import ExperimentParams, Values
from rfbench.compute.experiments.shared import known, row, widest
from rfbench.compute.features import registry, theory
from rfbench.compute.features.theory import resolution
from rfbench.compute.kernels import KERNELS, log_kernel
from rfbench.compute.stats import standard_error


class Params(ExperimentParams):
    """MSE of kernel estimates on random pairs of real data rows (HRF Table 1)."""

    datasets: Values[str] = Field(
        ["wine", "boston"],
        description="data sets (wine = UCI Wine 178×13; boston = legacy Boston housing 506×13)",
    )
    estimators: Values[str] = Field(
        [
            "angular-hybrid@orf",
            "angular-hybrid@iid",
            "trig@orf",
            "hyperbolic@orf",
            "trig@orf-fast",
            "hyperbolic@orf-fast",
            "trig@sorf",
            "hyperbolic@sorf",
            "trig@halton",
            "hyperbolic@halton",
            "trig@iid",
            "hyperbolic@iid",
        ],
        min_length=1,
        description="estimator names; hybrids use (m, n), the others `features` projections",
    )
    features: int = Field(
        512, ge=1, description="projections of the non-hybrid estimators (paper: 512)"
    )
    m: int = Field(
        64, ge=1, description="base projections of a hybrid (FLOP-matched: m·n = features)"
    )
    n: int = Field(8, ge=1, description="λ projections of a hybrid")
    pairs: int = Field(100, ge=2, description="number of random pairs (x_i, x_j), i ≠ j")
    pair_seed: int = Field(
        0,
        ge=0,
        description="seed of np.random.default_rng choosing the pairs (shared by estimators)",
    )
    reps: int = Field(200, ge=2, description="independent feature draws, each applied to all pairs")
    norm: Values[Annotated[float, Field(gt=0)]] = Field(
        [1.0], min_length=1, description="L2 norm of the preprocessed rows (see scaling)"
    )
    scaling: Literal["rows", "max", "mean"] = Field(
        "rows", description="rows: every row scaled to `norm`; max/mean: one factor for all rows"
    )
    kernel: Literal[KERNELS] = Field("softmax", description="softmax (the paper) or gaussian")


def is_hybrid(estimator: str) -> bool:
    """Whether ``estimator`` (name or alias) is a hybrid: it takes (m, n), not ``features``."""
    return registry.estimator_class(estimator).kind == "hybrid"


def _sizes(estimator: str, config: Mapping[str, Any]) -> tuple[int, int | None]:
    """(m, n): hybrids take (m, n) (FLOP-matched, HRF App. I; docs/methods.md#hrf-flop-matching),
    the others (features, None)."""
    if is_hybrid(estimator):
        return config["m"], config["n"]
    return config["features"], None


@lru_cache(maxsize=16)
def pair_points(
    dataset: str, norm: float, scaling: str, pairs: int, pair_seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y): the preprocessed rows of the ``pairs`` pairs, each (pairs, d), read-only.

    Pairs (i, j) with i ≠ j uniform: i ~ U{0..n-1}, j = (i + U{1..n-1}) mod n, drawn from
    ``np.random.default_rng(pair_seed)`` (a fixed documented seed, not the job's stream).
    """
    from rfbench.compute.datasets import load, standardize_and_scale

    ds = standardize_and_scale(load(dataset), norm=norm, mode=scaling)
    rng = np.random.default_rng(pair_seed)
    first = rng.integers(ds.n, size=pairs)
    second = (first + rng.integers(1, ds.n, size=pairs)) % ds.n
    X, Y = ds.X[first], ds.X[second]
    for arr in (X, Y):
        arr.setflags(write=False)
    return X, Y


def pair_estimates(
    est: Any, rng: np.random.Generator, X: np.ndarray, Y: np.ndarray, reps: int
) -> np.ndarray:
    """K̂(x_p, y_p) = Re φ(x_p)ᵀψ(y_p) for ``reps`` independent draws, each applied to every pair.

    Uses the explicit feature maps (docs/architecture.md#estimator-contract: they give the same
    numbers as ``estimate``) paired row by row, which avoids the pairs × pairs Gram matrix. Returns
    (reps, pairs).
    """
    pairs, d = X.shape
    width = 4 * est.m * (1 + (est.n or 0))  # ≥ any map here: 4m(n+1), 2m
    out = []
    for start, stop in chunks(reps, 16 * pairs * width):
        draw = est.sample(rng, d=d, draws=stop - start)
        q, k = est.query_log_features(draw, X), est.key_log_features(draw, Y)
        dot = np.einsum("bpf,bpf->bp", q.values, k.values)
        with np.errstate(over="ignore"):
            out.append(np.real(dot) * np.exp(q.log_scale + k.log_scale))
    values = np.concatenate(out)
    if not np.all(np.isfinite(values)):
        raise ArithmeticError(f"{est.name}: non-finite estimates (inputs too large)")
    return values


@register_experiment
class QMCTable(Experiment):
    """HRF Table 1: MSE of softmax estimates on random pairs of UCI wine / Boston rows."""

    name = "qmc"
    description = "HRF Table 1: angular hybrids vs ORF, SORF and Halton on wine and Boston pairs"
    tagline = "Hybrids vs ORF, SORF and Halton on data pairs (HRF Table 1)."
    params = Params
    spec_only = True
    profiles = {"quick": {"reps": 20, "pairs": 20}, "paper": {}}

    memory_parameters = ("reps", "pairs", "features", "m", "n")

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """One job in float64: the estimates and errors of every draw at every pair (reps ×
        pairs, about four copies), a chunk of draws' query and key features (pairs × width, at
        least one draw, with working copies) and their projections (× d), and the data set."""
        from rfbench.compute.datasets.registry import DATASETS, get

        names = config["estimators"]
        hybrids = [e for e in names if known(e) and is_hybrid(e)]
        width, projections = max(
            widest([e for e in names if e not in hybrids], config["features"]),
            widest(hybrids, config["m"], config["n"]),
        )
        sets = [get(n) for n in config["datasets"] if n in DATASETS]
        d = max([s.n_features or 64 for s in sets], default=64)
        rows = max([s.n_rows or 0 for s in sets], default=0)
        reps, pairs = config["reps"], config["pairs"]
        per_draw = 16 * pairs * width
        draws = chunk_size(per_draw, reps)
        return 4 * CHUNK_BYTES + 8 * (4 * reps * pairs + 3 * draws * projections * d
                                      + 4 * rows * d) + 3 * draws * per_draw  # fmt: skip

    def validate_config(self, config: Mapping[str, Any]) -> None:
        from rfbench.compute.datasets import DataError
        from rfbench.compute.datasets.registry import get as dataset_info

        for name in config["datasets"]:
            try:
                dataset_info(name)
            except DataError as exc:
                raise ConfigError(str(exc)) from None
        for name in config["estimators"]:
            try:
                m, n = _sizes(name, config)
                registry.get(name, kernel=config["kernel"], m=m, n=n)
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"invalid value for 'estimators': {exc}") from None

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        common = {k: config[k] for k in ("pairs", "pair_seed", "reps", "scaling", "kernel")}
        return [
            JobSpec(
                dataset=dataset,
                estimator=name,
                norm=norm,
                **dict(zip(("m", "n"), _sizes(name, config), strict=True)),
                **common,
            )
            for dataset in config["datasets"]
            for norm in config["norm"]
            for name in config["estimators"]
        ]

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        X, Y = pair_points(
            spec["dataset"], spec["norm"], spec["scaling"], spec["pairs"], spec["pair_seed"]
        )
        est = registry.get(spec["estimator"], kernel=spec["kernel"], m=spec["m"], n=spec["n"])
        true = np.exp(log_kernel(spec["kernel"], X[:, None], Y[:, None]))[:, 0, 0]
        err = pair_estimates(est, rng, X, Y, spec["reps"]) - true  # (reps, pairs)
        per_rep, bias_rep, reps = np.mean(err**2, axis=1), err.mean(axis=1), spec["reps"]
        sd = float(per_rep.std(ddof=1))
        metrics: list[tuple[str, float, float | None, int]] = [
            ("mse", float(per_rep.mean()), standard_error(per_rep), reps),
            ("mse_std", sd, None, reps),
            ("bias", float(err.mean()), standard_error(bias_rep), reps),
        ]
        if theory.has_theory(est.name):
            metrics.append(("theory_mse", float(np.mean(theory.mse(est, X, Y))), None, 0))
        keys = ("estimator", "kernel", "dataset", "m", "n", "norm", "scaling", "pairs")
        base = {k: spec[k] for k in keys} | {"d": X.shape[1], "weights": est.weights_name}
        base["r"] = spec["norm"] if spec["scaling"] == "rows" else None
        orders = {"mse": 2, "mse_std": 2, "bias": 1}
        flags = {k: _resolved(est, X, Y, reps, order) for k, order in orders.items()}
        return [  # theory_mse: exact, resolved
            row(k, v, s, t, **base, resolved=flags.get(k, True)) for k, v, s, t in metrics
        ]


def _resolved(est, X: np.ndarray, Y: np.ndarray, reps: int, order: int) -> bool | None:
    """Every pair (x_i, y_i) resolved by ``reps`` draws
    (rfbench.compute.features.theory.resolution)."""
    ok = resolution.resolved(est, X, Y, reps, order)
    return None if ok is None else bool(np.all(ok))
