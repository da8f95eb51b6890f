"""Clustering-based hybrid: one complex-exponential estimator per pair of k-means cluster centres,
λ̂ = the pair's indicator (HRF Sec. 2.4, App. H.2–H.3, Def. H.2;
docs/methods.md#hrf-cluster-hybrid)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rfbench.compute.checks import positive_int
from rfbench.compute.features.base import (
    Block,
    Draw,
    Features,
    Fit,
    Rng,
    Side,
    WeightsSampler,
    bilinear_estimate,
    check_inputs,
    concat_features,
)
from rfbench.compute.features.complex_exp import ComplexExp, complex_diagonal_A, real_diagonal_A
from rfbench.compute.features.hybrid import HybridBase
from rfbench.compute.features.registry import HybridEntry, register_hybrid

#: k-means restarts (scikit-learn's n_init in :func:`fit_clusters`) and the nominal Lloyd
#: iterations of the cost model (rfbench.compute.experiments.cost.model)
KMEANS_INITS, KMEANS_ITERS = 10, 20


@dataclass(frozen=True)
class Clustering:
    """k-means clusters: centres (original space) and the assignment rule."""

    centres: np.ndarray  # (k, d)
    shift: np.ndarray  # standardisation: (u - shift) / scale
    scale: np.ndarray

    def assign(self, X: np.ndarray) -> np.ndarray:
        """Nearest centre in standardised coordinates (= the k-means label of the fit data)."""
        Z = (X - self.shift) / self.scale
        C = (self.centres - self.shift) / self.scale
        return np.argmin(((Z[..., None, :] - C) ** 2).sum(-1), axis=-1)


def fit_clusters(
    X: np.ndarray, k: int, rng: np.random.Generator, standardize: bool = True
) -> Clustering:
    """sklearn KMeans (seed drawn from ``rng``) on standardised data, centroids mapped back
    (the released HRF notebook: StandardScaler, KMeans tol=1e-5; docs/experiments.md#hrf-fig6, step
    6)."""
    from sklearn.cluster import KMeans

    X = check_inputs(X).reshape(-1, np.shape(X)[-1])
    if len(X) < k:
        raise ValueError(f"need at least {k} fit points for {k} clusters, got {len(X)}")
    shift = X.mean(axis=0) if standardize else np.zeros(X.shape[1])
    scale = X.std(axis=0) if standardize else np.ones(X.shape[1])
    scale = np.where(scale > 0, scale, 1.0)
    seed = int(rng.integers(2**31 - 1))
    km = KMeans(n_clusters=k, n_init=KMEANS_INITS, tol=1e-5, max_iter=30000, random_state=seed)
    km.fit((X - shift) / scale)
    return Clustering(km.cluster_centers_ * scale + shift, shift, scale)


class ClusterHybrid(HybridBase):
    """Σ_ij 1[x ∈ i]1[y ∈ j]·Re Ψ_{A_ij}(x)ᵀΨ_{(A_ij)⁻¹}(y), A_ij of Eq. 88 (``diagonal="complex"``:
    Eq. 86–87) for the centre pair (HRF Def. H.2; docs/methods.md#hrf-cluster-hybrid). One set of ω
    shared by all pairs (HRF App. H.3); ``clusters`` = k or (n_q, n_k); inputs (N, d)."""

    family = "cluster-hybrid"
    data_dependent = True
    paper = "HRF Sec. 2.4, Def. H.2, Eq. 88"
    description = "zero-one mixture of complex-exp estimators per k-means cluster pair (fit data)"

    def __init__(
        self,
        kernel: str = "softmax",
        m: int = 128,
        n: int | None = None,
        weights: WeightsSampler | None = None,
        clusters: int | tuple[int, int] = 2,
        diagonal: str = "real",
        standardize: bool = True,
    ) -> None:
        super().__init__(kernel, m, weights)
        if n is not None:
            raise ValueError("cluster-hybrid has deterministic λ (cluster indicators): no n")
        nq, nk = (clusters, clusters) if np.ndim(clusters) == 0 else tuple(clusters)
        self.clusters = (positive_int("query clusters", nq), positive_int("key clusters", nk))
        if diagonal not in ("real", "complex"):
            raise ValueError(f"diagonal must be 'real' or 'complex', got {diagonal!r}")
        self.diagonal, self.standardize = diagonal, bool(standardize)

    @property
    def unbiased(self) -> bool:
        return self.weights.marginally_gaussian

    def fit_flops(self, n: float, d: int) -> float:
        """k-means of both sets (HRF App. H.3): ``KMEANS_INITS`` restarts of ``KMEANS_ITERS``
        nominal Lloyd iterations of 2·n·(k_q + k_k)·d FLOPs (the cost model of
        rfbench.compute.experiments.cost.model)."""
        return KMEANS_INITS * KMEANS_ITERS * 2 * n * sum(self.clusters) * d

    def sample(
        self, rng: Rng, d: int, draws: int = 1, fit: Fit | None = None, frame: int | None = None
    ) -> Draw:
        if fit is None:
            raise ValueError(f"{self.name} is data-dependent: pass fit=(X, Y) to sample()")
        if frame is not None and frame < d:
            raise ValueError(f"{self.name} uses diagonal A: it needs full projections, no frame")
        query, key = (
            fit_clusters(Z, k, rng, self.standardize)
            for Z, k in zip(fit, self.clusters, strict=True)
        )
        make_A = real_diagonal_A if self.diagonal == "real" else complex_diagonal_A
        pairs = [[ComplexExp(diag=make_A(ri, rj)) for rj in key.centres] for ri in query.centres]
        proj = self.weights.sample(rng, d, self.m, draws)
        return Draw({"omega": proj}, {"query": query, "key": key, "pairs": pairs}, d)

    def _pair_features(self, draw: Draw, X: np.ndarray, i: int, j: int, side: Side) -> Features:
        comp = draw.params["pairs"][i][j]
        return self.with_kernel(comp.features(draw.projections["omega"], X, side, {}), X)

    def _inputs(self, X: np.ndarray) -> np.ndarray:
        X = check_inputs(X)
        if X.ndim != 2:
            raise ValueError(f"{self.name} takes inputs of shape (N, d), got {X.shape}")
        return X

    def estimate_blocks(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> list[Block]:
        """One block per nonempty (query-cluster, key-cluster) pair, with that pair's maps."""
        X, Y = self._inputs(X), self._inputs(Y)
        lx, ly = draw.params["query"].assign(X), draw.params["key"].assign(Y)
        blocks = []
        for i, j in np.ndindex(*self.clusters):
            rows, cols = np.flatnonzero(lx == i), np.flatnonzero(ly == j)
            if rows.size and cols.size:
                query = self._pair_features(draw, X[rows], i, j, "query")
                blocks.append((rows, cols, query, self._pair_features(draw, Y[cols], i, j, "key")))
        return blocks

    def estimate(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """Block by block: each (query-cluster, key-cluster) block uses its own estimator."""
        X, Y = self._inputs(X), self._inputs(Y)
        out = np.zeros((draw.draws, len(X), len(Y)))
        for rows, cols, query, key in self.estimate_blocks(draw, X, Y):
            out[:, rows[:, None], cols[None, :]] = bilinear_estimate(query, key)
        return out

    def log_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        """[1[c(u) = i]·Ψ_ij(u)]_(i,j): dimension n_q·n_k·m, one nonzero row of blocks."""
        X = self._inputs(X)
        labels = draw.params["query" if side == "query" else "key"].assign(X)
        blocks = []
        for i, j in np.ndindex(*self.clusters):
            f = self._pair_features(draw, X, i, j, side)
            mine = labels == (i if side == "query" else j)
            blocks.append(Features(f.values, np.where(mine, f.log_scale, -np.inf)))
        return concat_features(blocks)


register_hybrid(HybridEntry.of(ClusterHybrid))
