"""Replay of the HRF clustering notebook's legacy random streams (HRF App. H.3;
docs/experiments.md#hrf-fig6, which lists the seeds and steps).

Every stream is an explicit ``np.random.RandomState(seed)`` (never the global state), and the 2021
scipy ``ortho_group.rvs`` algorithm is re-implemented (modern scipy samples Haar matrices
differently). The notebook's second pair of matrices (seed 1266) is unused. The estimators are the
library's, applied to the legacy projections.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rfbench.compute.experiments.clusters.gram_sse import (
    entries,
    features_prefix_sse,
    features_sse,
    gram_sse,
    prefix_sse,
    product_sse,
    real_operands,
)
from rfbench.compute.features import registry
from rfbench.compute.features.base import (
    Draw,
    Estimator,
    Projections,
    full_projections,
)
from rfbench.compute.features.cluster_hybrid import Clustering, fit_clusters
from rfbench.compute.features.complex_exp import ComplexExp, real_diagonal_A

DIM = 50  # input dimension
POINTS = 1000  # points per cluster
# row norms after normalisation (HRF App. H.3; docs/experiments.md#hrf-fig6, step 5)
QUERY_NORM, KEY_NORM = 0.1, 1.0
SEED_CENTRES, SEED_ORTHO, SEED_SAMPLES, SEED_REPS = 1263, 1265, 679, 1234

#: the four data sets of HRF Fig. 6 / Table 3: (variance σ², coordinates whose sign is kept)
SETTINGS: dict[str, tuple[float, int]] = {
    "s1": (1.0, 12),
    "s2": (1.0, 25),
    "s3": (10.0, 12),
    "s4": (10.0, 25),
}


def ortho_group_2021(dim: int, rs: np.random.RandomState) -> np.ndarray:
    """A Haar orthogonal matrix by scipy's 2021 ``ortho_group.rvs`` algorithm (Householder product).

    H = I; for n = 0..dim-1: x ~ N(0, I_{dim-n}), D = sign(x₀) (1 if x₀ = 0), x₀ += D‖x‖, x rescaled
    so that ‖x‖² = 2, H[:, n:] = -D (H[:, n:] - (H[:, n:] x) xᵀ) (HRF App. H.3;
    docs/experiments.md#hrf-fig6, step 2). Draws dim(dim+1)/2 normals from ``rs`` in this order, as
    the notebook's calls did.
    """
    H = np.eye(dim)
    for n in range(dim):
        x = rs.normal(size=(dim - n,))
        norm2 = np.dot(x, x)
        x0 = x[0].item()
        sign = np.sign(x0) if x0 != 0 else 1.0
        x[0] += sign * np.sqrt(norm2)
        x /= np.sqrt((norm2 - x0**2 + x[0] ** 2) / 2.0)
        H[:, n:] = -sign * (H[:, n:] - np.outer(np.dot(H[:, n:], x), x))
    return H


def transform_sign(x: np.ndarray, y: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """y's first ``keep`` coordinates keep their sign, the others get the sign opposite to x's.

    Only the kept coordinates can then have x_k y_k > 0, which bounds s = l(A) (HRF App. H.3; the
    notebook's ``transform_sign``).
    """
    sign_x = np.append(-np.sign(y)[:keep], np.sign(x)[keep:])
    return x, np.abs(y) * -sign_x


@dataclass(frozen=True)
class ClusteredData:
    """Queries Q and keys K (2·POINTS × DIM) of one setting, rows normalised, with their centres."""

    name: str
    variance: float
    Q: np.ndarray
    K: np.ndarray

    @property
    def sigma(self) -> float:
        """The paper's σ: the standard deviation (the notebook's ``sigma`` is the variance)."""
        return float(np.sqrt(self.variance))


def centres() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """(Q0, K0, [O1, O2]) from the notebook's seeds 1263 and 1265 (HRF App. H.3;
    docs/experiments.md#hrf-fig6 steps 1–2)."""
    rs = np.random.RandomState(SEED_CENTRES)
    q0 = rs.uniform(low=-4, high=-3, size=DIM)
    q0 = q0 * (2 * rs.randint(0, 1) - 1)  # randint(0, 1) is always 0: Q0 ∈ [3, 4]^50
    k0 = rs.uniform(low=2, high=5, size=DIM)
    k0 = (rs.randint(2, size=DIM) * 2 - 1) * k0
    rs = np.random.RandomState(SEED_ORTHO)
    ortho = [ortho_group_2021(DIM, rs) for _ in range(2)]
    return q0, k0, ortho


def _normalise(X: np.ndarray, norm: float) -> np.ndarray:
    return X / np.linalg.norm(X, axis=1)[:, None] * norm


@lru_cache(maxsize=8)
def clustered_data(name: str) -> ClusteredData:
    """The data set ``name`` ∈ {s1, s2, s3, s4} exactly as the notebook generated it (HRF App. H.3;
    docs/experiments.md#hrf-fig6 3–5)."""
    if name not in SETTINGS:
        raise ValueError(f"unknown clustered data set {name!r}; allowed: {', '.join(SETTINGS)}")
    variance, keep = SETTINGS[name]
    q0, k0, (o1, o2) = centres()
    q1, k1 = transform_sign(q0 @ o1, k0 @ o1, keep)
    q2 = np.abs(q0 @ o2) * np.sign(q1)
    q2, k2 = transform_sign(q2, k0 @ o2, keep)
    rs = np.random.RandomState(SEED_SAMPLES)
    cov = variance * np.identity(DIM)
    Q = np.append(
        rs.multivariate_normal(q1, cov, POINTS), rs.multivariate_normal(q2, cov, POINTS), axis=0
    )
    K = np.append(
        rs.multivariate_normal(k1, cov, POINTS), rs.multivariate_normal(k2, cov, POINTS), axis=0
    )
    Q, K = _normalise(Q, QUERY_NORM), _normalise(K, KEY_NORM)
    for arr in (Q, K):
        arr.setflags(write=False)  # shared by every job of a process (lru_cache)
    return ClusteredData(name, variance, Q, K)


# ----------------------------------------------------------------------------- clusters, replay


@dataclass(frozen=True)
class PaperClusters:
    """A data set in canonical order (sorted by cluster label) with its k-means clusters.

    Labels are numbered as the notebook's printed output has them (its sklearn labels): query
    label 0 = the second generating cluster, key label 0 = the first, so ``s`` lists l(A_ij) for
    (i, j) = (0, 0), (0, 1), (1, 0), (1, 1) in the order of HRF Table 3's s-lists.
    """

    data: ClusteredData
    Q: np.ndarray  # rows sorted by query label
    K: np.ndarray
    T: np.ndarray  # exp(Q Kᵀ), the exact Gram matrix in this order
    q_sizes: tuple[int, int]
    k_sizes: tuple[int, int]
    pairs: tuple[tuple[ComplexExp, ComplexExp], tuple[ComplexExp, ComplexExp]]
    s: tuple[float, ...]


def _canonical(cl: Clustering, X: np.ndarray, own: np.ndarray) -> tuple[Clustering, np.ndarray]:
    """The clustering with label 0 = the cluster holding most of the rows flagged in ``own``."""
    labels = cl.assign(X)
    if np.mean(labels[own] == 0) < 0.5:
        cl = Clustering(cl.centres[::-1], cl.shift, cl.scale)
        labels = 1 - labels
    return cl, labels


def fit_paper_clusters(
    data: ClusteredData, rows_q: np.ndarray, rows_k: np.ndarray, kmeans_seed: int
) -> PaperClusters:
    """:class:`PaperClusters` of the given rows of ``data`` (all rows: :func:`paper_clusters`).

    k-means (k = 2, sklearn, standardised data: the notebook's settings) seeded with
    ``default_rng([kmeans_seed, 0|1])``. Query label 0 = the cluster of the second generating
    centre, key label 0 = the first (the notebook's printed order). A_ij: HRF Eq. 88 per pair.
    """
    (cq, lq), (ck, lk) = (
        _canonical(fit_clusters(X, 2, np.random.default_rng([kmeans_seed, side])), X, own)
        for side, (X, own) in enumerate(
            ((data.Q[rows_q], rows_q >= POINTS), (data.K[rows_k], rows_k < POINTS))
        )
    )
    Q = data.Q[rows_q][np.argsort(lq, kind="stable")]
    K = data.K[rows_k][np.argsort(lk, kind="stable")]
    diag = [[real_diagonal_A(ri, rj) for rj in ck.centres] for ri in cq.centres]
    s = tuple(
        float(np.sum((a * ri + rj / a) ** 2))
        for ri, row in zip(cq.centres, diag, strict=True)
        for rj, a in zip(ck.centres, row, strict=True)
    )
    pairs = tuple(tuple(ComplexExp(diag=a) for a in row) for row in diag)
    T = np.exp(Q @ K.T)
    for arr in (Q, K, T):
        arr.setflags(write=False)
    sizes = tuple(tuple(int(np.sum(lab == i)) for i in (0, 1)) for lab in (lq, lk))
    return PaperClusters(data, Q, K, T, sizes[0], sizes[1], pairs, s)  # type: ignore[arg-type]


@lru_cache(maxsize=4)
def paper_clusters(name: str, kmeans_seed: int) -> PaperClusters:
    """The data set ``name`` with its clusters, fitted once (the notebook refitted its unseeded
    KMeans on the same data every repetition; for σ = 1 every fit gives the same partition)."""
    rows = np.arange(2 * POINTS)
    return fit_paper_clusters(clustered_data(name), rows, rows, kmeans_seed)


def legacy_projections(m: int, rep: int) -> dict[str, np.ndarray]:
    """The notebook's projections of repetition ``rep`` (``evaluate_performance``), (m, DIM) each.

    seed(1234 + rep): W_trig, then W_fav ("FAVOR+" = SM⁺); seed(1234 + rep) again: W_c, shared by
    the four complex-exponential estimators of the cluster hybrid (so W_c = W_trig).
    """
    rs = np.random.RandomState(SEED_REPS + rep)
    w_trig, w_pos = rs.normal(size=(m, DIM)), rs.normal(size=(m, DIM))
    w_c = np.random.RandomState(SEED_REPS + rep).normal(size=(m, DIM))
    return {"trig@iid": w_trig, "positive@iid": w_pos, "cluster-hybrid": w_c}


def projections(W: np.ndarray) -> Projections:
    """One draw of projections from rows W (M, k), stored BLAS-friendly (W as a transposed view)."""
    return full_projections(np.ascontiguousarray(W.T)[None].swapaxes(-1, -2))


def _cluster_blocks(
    pc: PaperClusters, proj: Projections
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(Φ, Ψ, K) of each block (i, j) of the zero-one cluster hybrid (HRF Def. H.2): its
    estimate is Re Ψ_{A_ij}(q)ᵀΨ_{A_ij⁻¹}(k) for queries of cluster i and keys of cluster j."""
    qb, kb = np.cumsum((0, *pc.q_sizes)), np.cumsum((0, *pc.k_sizes))
    for i, j in np.ndindex(2, 2):
        rows, cols = slice(qb[i], qb[i + 1]), slice(kb[j], kb[j + 1])
        comp = pc.pairs[i][j]
        phi = comp.features(proj, pc.Q[rows], "query", {}).dense()[0]
        psi = comp.features(proj, pc.K[cols], "key", {}).dense()[0]
        yield phi, psi, pc.T[rows, cols]


def cluster_gram_sse(pc: PaperClusters, proj: Projections) -> float:
    """Σ (K̂ − K)² of the zero-one cluster hybrid (HRF Def. H.2), block by block."""
    return sum(product_sse(phi, psi, T) for phi, psi, T in _cluster_blocks(pc, proj))


def cluster_prefix_sse(pc: PaperClusters, proj: Projections, counts: list[int]) -> list[float]:
    """:func:`cluster_gram_sse` of the first ``counts[k]`` projections of ``proj`` (ascending,
    the last all of them), from one product per block (:func:`.gram_sse.prefix_sse`)."""
    totals = np.zeros(len(counts))
    for phi, psi, T in _cluster_blocks(pc, proj):
        a, b = real_operands(phi, psi)
        per = a.shape[1] // counts[-1]
        totals += prefix_sse(a, b, T, [per * m for m in counts])
    return totals.tolist()


def estimator_gram_sse(est: Estimator, draw: Draw, pc: PaperClusters) -> float:
    """Σ (K̂ − K)² of a registry estimator's one-draw Gram matrix ``estimate`` = Re Φ(Q)Ψ(K)ᵀ
    (docs/architecture.md#estimator-contract): block by block, a block of rows at a time, where
    the estimator declares its blocks (``estimate_blocks``, docs/extending.md#capabilities)."""
    blocks = est.estimate_blocks(draw, pc.Q, pc.K)
    if blocks is None:
        return gram_sse(est.estimate(draw, pc.Q, pc.K)[0], pc.T)
    return sum(
        features_sse(query, key, entries(pc.T, rows, cols)) for rows, cols, query, key in blocks
    )


def _registry_sse(pc: PaperClusters, est_name: str, W: np.ndarray) -> float:
    est = registry.get(est_name, m=len(W))
    return estimator_gram_sse(est, Draw({"omega": projections(W)}, {}, DIM), pc)


def replay_mses(
    name: str, ms: Sequence[int], rep: int, kmeans_seed: int = 0
) -> dict[int, dict[str, float]]:
    """Gram-matrix MSEs (mean over the 2000 × 2000 entries) of repetition ``rep`` for every m of
    ``ms`` at once, replaying the notebook's streams: {m: {estimator: MSE}}.

    The notebook's trig and cluster-hybrid projections of m are the first m rows of the largest
    m's (one RandomState stream, read in order), so their estimates are partial products of the
    widest maps, all from one product (:func:`.gram_sse.prefix_sse`); positive@iid's follow them in
    the stream and are drawn for each m. A sum that is not finite is computed per m.
    """
    pc = paper_clusters(name, kmeans_seed)
    counts = sorted(set(ms))
    widest = legacy_projections(counts[-1], rep)
    hybrid = cluster_prefix_sse(pc, projections(widest["cluster-hybrid"]), counts)
    est = registry.get("trig@iid", m=counts[-1])
    draw = Draw({"omega": projections(widest["trig@iid"])}, {}, DIM)
    trig = features_prefix_sse(
        est.query_log_features(draw, pc.Q), est.key_log_features(draw, pc.K), pc.T, counts
    )
    out = {}
    for k, m in enumerate(counts):
        W = legacy_projections(m, rep)
        sse = {
            "cluster-hybrid": hybrid[k]
            if np.isfinite(hybrid[k])
            else cluster_gram_sse(pc, projections(W["cluster-hybrid"])),
            "positive@iid": _registry_sse(pc, "positive@iid", W["positive@iid"]),
            "trig@iid": trig[k]
            if trig is not None
            else _registry_sse(pc, "trig@iid", W["trig@iid"]),
        }
        out[m] = {key: v / pc.T.size for key, v in sse.items()}
    return out
