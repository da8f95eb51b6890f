"""HRF Fig. 6 / Table 3: the zero-one cluster hybrid vs SM⁺ and trig on clustered data
(docs/experiments.md#hrf-fig6; docs/methods.md#hrf-erratum-18).

Protocol ``paper`` replays the released notebook's streams
(:mod:`rfbench.compute.experiments.clusters.legacy_ortho`); ``rfbench`` draws the registry
estimators from the job's generator, the cluster hybrid's k-means fitted once per (data set, m) job.
Rows: per repetition ``mse``; per (protocol, data set, m, estimator) ``mse_mean`` (± std/√reps),
``mse_min``, ``mse_max``; per data set the ``cluster_s`` values (``pair`` = "i-j") and the
closed-form ``theory_mse`` (iid projections).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.experiments.clusters.legacy_ortho import (
    DIM,
    POINTS,
    SETTINGS,
    PaperClusters,
    estimator_gram_sse,
    paper_clusters,
    replay_mses,
)
from rfbench.compute.experiments.params import ExperimentParams, Values
from rfbench.compute.experiments.shared import row, widest
from rfbench.compute.features import registry, theory
from rfbench.compute.features.base import Draw, Projections
from rfbench.compute.features.theory import resolution
from rfbench.compute.seeding import substream
from rfbench.compute.stats import standard_error
from rfbench.compute.text import weights_of

#: the estimators of HRF Table 3 (protocol paper runs these)
PAPER_ESTIMATORS = ("cluster-hybrid", "positive@iid", "trig@iid")
PROTOCOLS = ("paper", "rfbench")
DATASETS = tuple(SETTINGS)


class Params(ExperimentParams):
    """Gram-matrix MSE on HRF's synthetic clustered queries and keys."""

    datasets: Values[Literal[DATASETS]] = Field(
        list(SETTINGS),
        min_length=1,
        description="s1, s2 (σ = 1; s kept coordinates 12, 25), s3, s4 (σ = √10)",
    )
    m: Values[Annotated[int, Field(ge=1)]] = Field(
        [20, 50, 80, 100, 120, 150, 200], min_length=1, description="numbers of random projections"
    )
    reps: int = Field(
        20, ge=1, description="repetitions (protocol paper: RandomState(1234 + rep) projections)"
    )
    protocol: Values[Literal[PROTOCOLS]] = Field(
        list(PROTOCOLS),
        min_length=1,
        description="paper: exact replay of the notebook's streams; rfbench: registry estimators",
    )
    estimators: Values[str] = Field(
        list(PAPER_ESTIMATORS),
        min_length=1,
        description="estimators of protocol rfbench (protocol paper runs the paper's three)",
    )
    kmeans_seed: int = Field(
        0, ge=0, description="seed of the replay's k-means (the notebook's was unseeded)"
    )


def draw_slice(draw: Draw, b: int) -> Draw:
    """Realisation ``b`` of a batched draw, as a one-draw Draw (fitted parameters shared)."""

    def one(p: Projections) -> Projections:
        w = p.weights if p.weights is None or np.ndim(p.weights) == 1 else p.weights[b : b + 1]
        return Projections(p.W[b : b + 1], p.sq_norms[b : b + 1], p.d, w)

    return Draw({k: one(p) for k, p in draw.projections.items()}, draw.params, draw.d)


def rfbench_mse(
    name: str, pc: PaperClusters, m: int, reps: int, rng: np.random.Generator
) -> np.ndarray:
    """Gram MSEs of ``reps`` independent draws of the registry estimator ``name`` (job rng)."""
    est = registry.get(name, m=m)
    draw = est.sample(rng, d=DIM, draws=reps, fit=(pc.Q, pc.K))
    sse = [estimator_gram_sse(est, draw_slice(draw, b), pc) for b in range(reps)]
    return np.array(sse) / pc.T.size


def _resolved(name: str, m: int, pc: PaperClusters, draws: int) -> bool | None:
    """Gram MSE of ``draws`` draws resolved at every (query, key) pair
    (rfbench.compute.features.theory.resolution; the cluster hybrid is not assessed: None)."""
    try:
        est = registry.get(name, m=m)
    except (ValueError, TypeError):
        return None
    return resolution.pairs_resolved(est, pc.Q, pc.K, draws, 2)


def _frame2(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (x_i, y_j) as 2-D vectors with the same norms and inner product: (N, N', 2).

    Exact for the iid formulas, which depend on x, y only through ‖x‖, ‖y‖ and xᵀy.
    """
    nx = np.linalg.norm(X, axis=1)[:, None]
    along = (X @ Y.T) / nx
    ortho = np.sqrt(np.maximum(np.sum(Y**2, axis=1)[None, :] - along**2, 0.0))
    x2 = np.stack([np.broadcast_to(nx, along.shape), np.zeros_like(along)], axis=-1)
    return x2, np.stack([along, ortho], axis=-1)


def _theory_sum(est: Any, X: np.ndarray, Y: np.ndarray, rows: int = 250) -> float:
    """Σ over all pairs (x_i, y_j) of the closed-form MSE, ``rows`` query rows at a time."""
    return sum(
        float(np.sum(theory.mse(est, *_frame2(X[a : a + rows], Y)))) for a in range(0, len(X), rows)
    )


def unit_theory_mse(pc: PaperClusters) -> dict[str, float]:
    """Closed-form Gram MSE (mean over the entries) at m = 1 per paper estimator; divide by m.

    trig@iid and positive@iid via the theory dispatcher; the cluster hybrid's block (i, j) is the
    complex-exponential estimator with real A = A_ij, i.e. SM⁺ applied to (A_ij q, A_ij⁻¹ k)
    (HRF Sec. 2.3, Lemma 2.4; docs/methods.md#complex-exp: MSE = (SM²/m)(e^{l(A)} − 1)), so its MSE
    is positive@iid's at those points.
    """
    one = {name: registry.get(name, m=1) for name in ("positive@iid", "trig@iid")}
    out = {name: _theory_sum(est, pc.Q, pc.K) for name, est in one.items()}
    qb, kb = np.cumsum((0, *pc.q_sizes)), np.cumsum((0, *pc.k_sizes))
    hybrid = 0.0
    for i, j in np.ndindex(2, 2):
        comp = pc.pairs[i][j]
        u = comp.apply(pc.Q[qb[i] : qb[i + 1]], "query").real
        v = comp.apply(pc.K[kb[j] : kb[j + 1]], "key").real
        hybrid += _theory_sum(one["positive@iid"], u, v)
    return {k: v / pc.T.size for k, v in {"cluster-hybrid": hybrid, **out}.items()}


@register_experiment
class ClusterTable(Experiment):
    """HRF Fig. 6 / Table 3: Gram-matrix MSE on synthetic clustered queries and keys."""

    name = "clusters"
    # each estimator draws from its own keyed substream: adding one leaves the others alone
    unkeyed = ("estimators",)
    description = "HRF Fig. 6 / Table 3: zero-one cluster hybrid vs SM+ and trig, clustered data"
    tagline = "Cluster hybrid vs SM+ and trig on clustered data (HRF)."
    params = Params
    spec_only = True
    profiles = {"quick": {"datasets": ["s1"], "m": [20], "reps": 3}, "paper": {}}

    memory_parameters = ("m", "reps")

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """One job in float64: the N × N exact and estimated Gram matrices with working copies
        (N = 2 × 1000 queries and keys; about six), both sides' features (N × width, with copies;
        the cluster hybrid's positive and trig parts together: 4M) and the projections of all
        repetitions, drawn at once (reps × projections × 50)."""
        n, m = 2 * POINTS, max(config["m"])
        width, projections = widest(config["estimators"], m, 1, matched=True)
        width, projections = max(width, 4 * m), max(projections, 2 * m)
        return 8 * (6 * n * n + 3 * n * width + 2 * config["reps"] * projections * DIM)

    def validate_config(self, config: Mapping[str, Any]) -> None:
        for name in config["estimators"]:
            try:
                registry.get(name, m=1)
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"invalid value for 'estimators': {exc}") from None

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        seed, reps = config["kmeans_seed"], config["reps"]
        jobs = [
            JobSpec(task="theory", dataset=ds, m=tuple(config["m"]), kmeans_seed=seed)
            for ds in config["datasets"]
        ]
        for protocol in config["protocol"]:
            names = PAPER_ESTIMATORS if protocol == "paper" else tuple(config["estimators"])
            # the replay's projections of every m are nested (legacy_ortho.replay_mses): one job
            ms = [tuple(config["m"])] if protocol == "paper" else config["m"]
            gram = {"task": "gram", "protocol": protocol, "reps": reps, "estimators": names}
            jobs += [
                JobSpec(gram, dataset=ds, m=m, kmeans_seed=seed)
                for ds in config["datasets"]
                for m in ms
            ]
        return jobs

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        pc = paper_clusters(spec["dataset"], spec["kmeans_seed"])
        base = {"kernel": "softmax", "dataset": spec["dataset"], "d": DIM, "sigma": pc.data.sigma}
        if spec["task"] == "theory":
            return self._theory_rows(spec, pc, base)
        reps = spec["reps"]
        if spec["protocol"] == "paper":
            by_rep = [
                replay_mses(spec["dataset"], spec["m"], rep, spec["kmeans_seed"])
                for rep in range(reps)
            ]
            mses = {
                m: {name: np.array([r[m][name] for r in by_rep]) for name in spec["estimators"]}
                for m in spec["m"]
            }
        else:
            m = spec["m"]
            mses = {
                m: {
                    name: rfbench_mse(name, pc, m, reps, substream(rng, {"estimator": name}))
                    for name in spec["estimators"]
                }
            }
        rows = []
        for m, by_name in mses.items():
            rows += self._gram_rows(
                spec, pc, {**base, "protocol": spec["protocol"], "m": m}, by_name
            )
        return rows

    @staticmethod
    def _gram_rows(
        spec: JobSpec, pc: PaperClusters, base: dict, mses: dict[str, np.ndarray]
    ) -> list[dict[str, Any]]:
        """Per estimator: each repetition's ``mse``, their mean (± standard error), min, max."""
        m, reps = base["m"], spec["reps"]
        rows = []
        for name, values in mses.items():
            est = {**base, "estimator": name, "weights": weights_of(name)}
            one, all_reps = (_resolved(name, m, pc, n) for n in (1, reps))
            rows += [
                row("mse", v, None, 1, **est, rep=b, resolved=one) for b, v in enumerate(values)
            ]
            se = standard_error(values)
            rows += [
                row("mse_mean", values.mean(), se, reps, **est, resolved=all_reps),
                row("mse_min", values.min(), None, reps, **est, resolved=one),
                row("mse_max", values.max(), None, reps, **est, resolved=one),
            ]
        return rows

    @staticmethod
    def _theory_rows(spec: JobSpec, pc: PaperClusters, base: dict) -> list[dict[str, Any]]:
        """The s-values of the four centre pairs and the closed-form MSE for every m."""
        hyb = {**base, "estimator": "cluster-hybrid", "weights": "iid"}
        ranks = np.argsort(np.argsort(-np.asarray(pc.s))) + 1  # 1 = the largest s
        rows = [
            row("cluster_s", s, **hyb, pair=f"{i}-{j}", pair_rank=int(rank))
            for (i, j), s, rank in zip(np.ndindex(2, 2), pc.s, ranks, strict=True)
        ]
        sums = unit_theory_mse(pc)
        rows += [
            row("theory_mse", t / m, **base, estimator=name, weights="iid", m=m)
            for m in spec["m"]
            for name, t in sums.items()
        ]
        return rows
