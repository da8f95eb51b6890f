"""Random projections ω, batched over draws, and the couplings they are drawn from
(docs/architecture.md#estimator-contract, docs/methods.md#couplings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rfbench.compute.checks import positive_int
from rfbench.compute.kernels import sq_norms


@dataclass(frozen=True)
class Projections:
    """Random projections ω of one estimator, batched over independent draws.

    W:        (draws, M, k) — rows ω_i restricted to the first k input coordinates (k = d unless a
              rotation-invariant coupling was sampled in a k-dimensional frame).
    sq_norms: (draws, M) — the full squared norms ‖ω_i‖² (needed by GERF/DERF even in a frame).
    weights:  (M,) or (draws, M) quadrature weights a_i with K̂ = Σ_i a_i f1(ω_i, x) f2(ω_i, y);
              None means the Monte Carlo weights 1/M. Signed weights (SGQ) are allowed.
    d:        the dimension of the inputs the projections were drawn for.
    phase:    (draws, M) random phases b_i drawn with the ω_i (random-phase TrigRF, DERF Eqs. 4-5);
              None for every other map.
    """

    W: np.ndarray
    sq_norms: np.ndarray
    d: int
    weights: np.ndarray | None = None
    phase: np.ndarray | None = None

    @property
    def draws(self) -> int:
        return self.W.shape[0]

    @property
    def count(self) -> int:
        return self.W.shape[1]

    @property
    def frame(self) -> int:
        return self.W.shape[2]

    def project(self, X: np.ndarray) -> np.ndarray:
        """ωᵀx for every draw, row and projection: (draws, N, M). X is (N, k) or (draws, N, k)."""
        X = check_inputs(X, self.frame)
        # X Wᵀ: as fast as (W Xᵀ)ᵀ on one BLAS thread, and C-ordered, so the feature maps built
        # on it (stack, exp, reshape) run on contiguous memory instead of copying.
        return X @ np.swapaxes(self.W, -1, -2)

    def quadrature_weights(self) -> np.ndarray:
        """a_i broadcastable to (draws, M)."""
        if self.weights is None:
            return np.full((1, self.count), 1.0 / self.count)
        return np.atleast_2d(self.weights)

    def scaled(self, factor: float) -> Projections:
        """The projections of ω·factor (e.g. a bandwidth 1/σ)."""
        W, sq = self.W * factor, self.sq_norms * factor**2
        return Projections(W, sq, self.d, self.weights, self.phase)


def check_inputs(X: np.ndarray, k: int | None = None) -> np.ndarray:
    """Inputs as float arrays of shape (N, k) or (draws, N, k), finite, with the expected width."""
    X = np.asarray(X)
    if X.dtype != np.float32:  # float64 unless the caller chose float32 (kernel regression)
        X = X.astype(float, copy=False)
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim not in (2, 3):
        raise ValueError(f"inputs must have shape (N, d) or (draws, N, d), got {X.shape}")
    if k is not None and X.shape[-1] != k:
        raise ValueError(f"inputs have {X.shape[-1]} coordinates, projections have {k}")
    if not np.all(np.isfinite(X)):
        raise ValueError("inputs contain NaN or infinite values")
    return X


def full_projections(W: np.ndarray, weights: np.ndarray | None = None) -> Projections:
    """Projections from full rows W (draws, M, d)."""
    return Projections(W, sq_norms(W), W.shape[-1], weights)


class WeightsSampler:
    """A coupling of the projection vectors ω (rows marginally N(0, I_d) unless stated)."""

    name: str = ""
    description: str = ""
    paper: str = ""
    #: every row is marginally N(0, I_d), so every unbiased component stays unbiased
    marginally_gaussian: bool = True
    #: the law of W is invariant under W -> W U for orthogonal U (enables k-dimensional frames)
    rotation_invariant: bool = False
    #: the number of rows is fixed by d (SGQ-det), not by m
    fixed_count: bool = False
    #: rows are independent N(0, I_d): an estimate from m rows is the mean of m single-row ones
    independent_rows: bool = False
    #: the rows carry importance weights p(ω)/(M q(ω)) against N(0, I_d) (``@fitted``)
    importance_weighted: bool = False
    #: the law of the rows is fitted to the data of ``sample(..., fit=(X, Y))`` (:meth:`fitted`)
    data_dependent: bool = False

    def fitted(self, X: np.ndarray, Y: np.ndarray) -> WeightsSampler:
        """The coupling fitted to queries X (N, d) and keys Y (N', d); itself unless
        :attr:`data_dependent`."""
        return self

    def fit_params(self) -> dict[str, Any]:
        """What a fitted coupling adds to a draw's parameters (e.g. for its closed form)."""
        return {}

    def draw_flops(self, count: float, d: int) -> float | None:
        """FLOPs of drawing ``count`` projections in R^d (rfbench.compute.experiments.cost.model),
        or None: no cost model (the cost map then writes a skipped row, never a guess)."""
        return None

    def from_gaussian(self, G: np.ndarray, m: int) -> np.ndarray | None:
        """The first m rows of draws built from ``G``, or None when this coupling cannot be
        (paired comparisons on common random numbers, pointwise ``paired``).

        Parameters
        ----------
        G : ndarray of shape (draws, blocks · d, d)
            Independent N(0, 1) entries, at least m rows.
        m : int
            Rows wanted.

        Returns
        -------
        W : ndarray of shape (draws, m, d), or None
        """
        return None

    def __init__(self, **options: Any) -> None:
        if options:
            raise TypeError(f"weights {self.name!r} takes no options, got {sorted(options)}")

    def sample(
        self, rng: np.random.Generator, d: int, m: int, draws: int, frame: int | None = None
    ) -> Projections:
        """``draws`` independent draws of m projections in R^d (first ``frame`` coordinates)."""
        for label, value in (("d", d), ("m", m), ("draws", draws)):
            positive_int(label, value)
        if frame is not None and frame < d:
            if not self.rotation_invariant:
                raise ValueError(f"weights {self.name!r} are not rotation invariant: no frames")
            if frame < 1:
                raise ValueError(f"frame must be at least 1, got {frame}")
            return self._sample_frame(rng, d, m, draws, frame)
        return self._sample(rng, d, m, draws)

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        """Full draws; a rotation-invariant coupling may implement only :meth:`_sample_frame`."""
        return self._sample_frame(rng, d, m, draws, d)

    def _sample_frame(
        self, rng: np.random.Generator, d: int, m: int, draws: int, k: int
    ) -> Projections:
        raise NotImplementedError(f"weights {self.name!r} implement no _sample")
