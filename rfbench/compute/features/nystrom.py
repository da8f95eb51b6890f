"""Nyström features φ(u) = K(u, L)·U_+Λ_+^{-1/2}, landmarks L from the fit data (Williams & Seeger,
NIPS 2001, Eq. 8; k-means landmarks: Zhang, Tsang & Kwok, ICML 2008; docs/methods.md#nystrom)."""

from __future__ import annotations

import numpy as np

from rfbench.compute.checks import positive_int
from rfbench.compute.features.base import (
    Draw,
    FamilyEstimator,
    Features,
    Fit,
    Projections,
    Rng,
    Side,
    WeightsSampler,
    check_inputs,
)
from rfbench.compute.features.registry import HybridEntry, register_alias, register_hybrid
from rfbench.compute.kernels import log_kernel, sq_norms

LANDMARKS = ("uniform", "kmeans")


def _uniform_landmarks(
    rng: np.random.Generator, pool: np.ndarray, m: int, draws: int
) -> np.ndarray:
    """``draws`` independent uniform subsets of min(m, n) distinct rows of ``pool`` (n, d):
    (draws, min(m, n), d)."""
    k = min(m, len(pool))
    order = np.argsort(rng.random((draws, len(pool))), axis=1)[:, :k]
    return pool[order]


def kmeans_landmarks(pool: np.ndarray, start: np.ndarray, iters: int) -> np.ndarray:
    """Lloyd's k-means on ``pool`` from the centres ``start``, for every draw at once.

    Parameters
    ----------
    pool : ndarray, shape (n, d)
        Data.
    start : ndarray, shape (draws, k, d)
        Initial centres (uniform landmarks); an empty cluster keeps its previous centre.
    iters : int
        Assignment/update sweeps.

    Returns
    -------
    ndarray, shape (draws, k, d)
        The centres.
    """
    C = np.array(start, dtype=float)
    k = C.shape[1]
    for _ in range(iters):
        dist = sq_norms(C)[:, None, :] - 2.0 * pool @ np.swapaxes(C, 1, 2)
        label = np.argmin(dist, axis=-1)  # (draws, n)
        onehot = (label[..., None] == np.arange(k)).astype(float)  # (draws, n, k)
        counts = onehot.sum(axis=1)  # (draws, k)
        sums = np.swapaxes(onehot, 1, 2) @ pool  # (draws, k, d)
        C = np.where(counts[..., None] > 0, sums / np.maximum(counts, 1.0)[..., None], C)
    return C


def _inverse_sqrt_basis(W: np.ndarray, rcond: float) -> np.ndarray:
    """B = U_+ Λ_+^{-1/2} of PSD matrices W (draws, k, k), eigenvalues ≤ rcond·λ_max dropped (zero
    columns), so B Bᵀ = W⁺ on the kept eigenspace: (draws, k, k)."""
    lam, U = np.linalg.eigh(W)
    keep = lam > rcond * np.max(lam, axis=-1, keepdims=True)
    scale = np.where(keep, 1.0 / np.sqrt(np.where(keep, lam, 1.0)), 0.0)
    return U * scale[:, None, :]


class Nystrom(FamilyEstimator):
    """Nyström features φ(u) = K(u, L)·U_+Λ_+^{-1/2} (module doc). m landmarks from
    ``fit=(X, Y)``; options ``landmarks`` ("uniform" | "kmeans"), ``rcond``, ``iters``."""

    family = "nystrom"
    data_dependent = True
    paper = "Williams & Seeger (NIPS 2001) Eq. 8; k-means: Zhang, Tsang & Kwok (ICML 2008)"
    description = "Nyström features, landmarks from the fit data (uniform or k-means)"
    m_counts = "landmarks"

    def __init__(
        self,
        kernel: str = "softmax",
        m: int = 128,
        n: int | None = None,
        weights: WeightsSampler | None = None,
        landmarks: str = "uniform",
        rcond: float = 1e-10,
        iters: int = 10,
    ) -> None:
        super().__init__(kernel, m, n)
        if landmarks not in LANDMARKS:
            raise ValueError(f"landmarks must be one of {', '.join(LANDMARKS)}, got {landmarks!r}")
        if isinstance(rcond, bool) or not 0.0 <= float(rcond) < 1.0:
            raise ValueError(f"rcond must be in [0, 1), got {rcond!r}")
        self.landmarks, self.rcond = landmarks, float(rcond)
        self.iters = positive_int("iters (k-means sweeps)", iters)

    def __repr__(self) -> str:
        return f"Nystrom(kernel={self.kernel!r}, m={self.m}, landmarks={self.landmarks!r})"

    def sample(
        self, rng: Rng, d: int, draws: int = 1, fit: Fit | None = None, frame: int | None = None
    ) -> Draw:
        """Landmarks (draws, k, d) from the pooled fit data and their basis B (draws, k, k)."""
        self._check_sample(d, draws, fit, frame, "takes its landmarks from the data")
        pool = np.unique(np.vstack([check_inputs(a, d).reshape(-1, d) for a in fit]), axis=0)
        L = _uniform_landmarks(rng, pool, self.m, draws)
        if self.landmarks == "kmeans":
            L = kmeans_landmarks(pool, L, self.iters)
        basis = _inverse_sqrt_basis(np.exp(log_kernel(self.kernel, L, L)), self.rcond)
        proj = Projections(L, sq_norms(L), d)
        return Draw({"landmarks": proj}, {"basis": basis}, d)

    def log_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        L = draw.projections["landmarks"].W
        X = check_inputs(X, L.shape[-1])
        log_k = log_kernel(self.kernel, X, L)  # (draws, N, k)
        top = np.max(log_k, axis=-1)
        log_k -= top[..., None]  # a fresh array: exponentiated in place
        values = np.exp(log_k, out=log_k) @ draw.params["basis"]
        return Features(values, top)


register_hybrid(HybridEntry.of(Nystrom, takes_weights=False))
register_alias("nystrom-kmeans", "nystrom", landmarks="kmeans")
