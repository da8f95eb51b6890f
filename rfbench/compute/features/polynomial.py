"""Polynomial maps of exp(xᵀy): the deterministic second-order Taylor map (Based, Arora et al. 2024,
§3; docs/methods.md#taylor2) and random Maclaurin features (Kar & Karnick, AISTATS 2012, Alg. 1;
docs/methods.md#maclaurin)."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

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
    shifted_exp,
)
from rfbench.compute.features.registry import HybridEntry, register_hybrid


def taylor2_features(X: np.ndarray) -> np.ndarray:
    """φ(u) = [1, u, q(u)] with φ(x)ᵀφ(y) = 1 + xᵀy + (xᵀy)²/2.

    Parameters
    ----------
    X : ndarray, shape (..., N, d)
        Inputs.

    Returns
    -------
    ndarray, shape (..., N, 1 + d + d(d+1)/2)
        q(u) lists u_i²/√2 (i = j) and u_i u_j (i < j): the upper triangle of uuᵀ/√2 with √2
        off-diagonal weights.
    """
    X = np.asarray(X, dtype=float)
    d = X.shape[-1]
    i, j = np.triu_indices(d)
    weight = np.where(i == j, np.sqrt(0.5), 1.0)
    quad = X[..., i] * X[..., j] * weight
    ones = np.ones(X.shape[:-1] + (1,))
    return np.concatenate([ones, X, quad], axis=-1)


class Taylor2(FamilyEstimator):
    """Second-order Taylor map of exp(xᵀy) (module doc): deterministic, biased, width
    1 + d + d(d+1)/2 independent of m; every draw is the same map."""

    family = "taylor2"
    m_counts = "number of features"
    paper = "Based (Arora et al., 2024) §3: 1 + xᵀy + (xᵀy)²/2"
    description = "second-order Taylor features of exp(xᵀy), deterministic (width 1+d+d(d+1)/2)"

    @property
    def deterministic(self) -> bool:
        return True

    def sample(
        self, rng: Rng, d: int, draws: int = 1, fit: Fit | None = None, frame: int | None = None
    ) -> Draw:
        self._check_sample(d, draws, fit, frame, "is not rotation invariant")
        empty = np.zeros((draws, 0, d))
        return Draw({"omega": Projections(empty, np.zeros((draws, 0)), d)}, {}, d)

    def log_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        X = check_inputs(X, draw.d)
        phi = taylor2_features(X)
        top = np.max(np.abs(phi), axis=-1)  # ≥ 1: the constant feature
        values = phi / top[..., None]
        if values.ndim == 2:
            values, top = values[None], top[None]
        values = np.broadcast_to(values, (draw.draws,) + values.shape[1:])
        log_scale = np.broadcast_to(np.log(top), values.shape[:2])
        return self.with_kernel(Features(values, log_scale), X)


def _log_maclaurin_weight(degree: np.ndarray, ratio: float) -> np.ndarray:
    """log(a_N / P(N)) with a_n = 1/n!, P(N = n) = (1 − r) rⁿ for degrees N ≥ 0 (any shape) and
    r = ``ratio`` ∈ (0, 1) (Kar & Karnick 2012, Alg. 1)."""
    degree = np.asarray(degree)
    return -gammaln(degree + 1) - np.log1p(-ratio) - degree * np.log(ratio)


class RandomMaclaurin(FamilyEstimator):
    """Random Maclaurin features of exp(xᵀy) (Kar & Karnick 2012, Alg. 1; module doc).

    Option ``ratio`` r ∈ (0, 1): the degree law P(N = n) = (1 − r) rⁿ (default ½, the paper's
    p = 2). Unbiased for every r; the variance is in theory/polynomial.py. Not rotation invariant
    (Rademacher vectors).
    """

    family = "maclaurin"
    m_counts = "number of features"
    paper = "Kar & Karnick (AISTATS 2012) Alg. 1, Lemma 7"
    description = "random Maclaurin features of exp(xᵀy): geometric degree, Rademacher products"

    def __init__(
        self,
        kernel: str = "softmax",
        m: int = 128,
        n: int | None = None,
        weights: WeightsSampler | None = None,
        ratio: float = 0.5,
    ) -> None:
        super().__init__(kernel, m, n, weights)
        if isinstance(ratio, bool) or not 0.0 < float(ratio) < 1.0:
            raise ValueError(f"maclaurin ratio must be in (0, 1), got {ratio!r}")
        self.ratio = float(ratio)

    @property
    def unbiased(self) -> bool:
        return True

    def sample(
        self, rng: Rng, d: int, draws: int = 1, fit: Fit | None = None, frame: int | None = None
    ) -> Draw:
        """Degrees N_i (draws, m) and the Rademacher rows of all features packed in order,
        (draws, T, d) with T = max over draws of Σ_i N_i (≈ m·r/(1 − r)): feature i uses rows
        start_i … start_i + N_i − 1, start = the exclusive cumulative sum of the degrees; rows
        past a draw's total are padding."""
        self._check_sample(d, draws, fit, frame, "is not rotation invariant")
        degree = rng.geometric(1.0 - self.ratio, size=(draws, self.m)) - 1
        end = np.cumsum(degree, axis=1)
        total = int(end[:, -1].max())
        signs = rng.integers(0, 2, size=(draws, total, d), dtype=np.int8)
        W = 2.0 * signs - 1.0
        proj = Projections(W, np.full(W.shape[:2], float(d)), d)
        return Draw({"omega": proj}, {"degree": degree, "end": end}, d)

    def log_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        proj = draw.projections["omega"]
        X = check_inputs(X, proj.frame)
        degree, end = draw.params["degree"], draw.params["end"]
        u = proj.project(X)  # (draws, N, T)
        zero, negative = u == 0, u < 0
        with np.errstate(divide="ignore"):
            log_abs = np.log(np.where(zero, 1.0, np.abs(u)))

        def segment_sums(a: np.ndarray) -> np.ndarray:
            """Σ over each feature's rows: differences of a cumulative sum, (draws, N, m)."""
            c = np.concatenate([np.zeros(a.shape[:-1] + (1,)), np.cumsum(a, axis=-1)], axis=-1)
            hi = np.broadcast_to(end[:, None, :], a.shape[:-1] + (self.m,))
            lo = np.broadcast_to((end - degree)[:, None, :], hi.shape)
            return np.take_along_axis(c, hi, -1) - np.take_along_axis(c, lo, -1)

        log_mag = segment_sums(log_abs) + 0.5 * _log_maclaurin_weight(degree, self.ratio)[:, None]
        log_mag = np.where(segment_sums(zero.astype(float)) > 0.5, -np.inf, log_mag)
        sign = np.where(np.round(segment_sums(negative.astype(float))) % 2 == 1, -1.0, 1.0)
        out = shifted_exp(log_mag[..., None], sign[..., None])
        row = out.log_scale - 0.5 * np.log(self.m)
        return self.with_kernel(Features(out.values, row), X)


for _cls in (Taylor2, RandomMaclaurin):
    register_hybrid(HybridEntry.of(_cls, takes_weights=False))
