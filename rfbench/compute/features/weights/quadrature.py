"""Quadrature couplings: the degree-3 sparse grid (SGQ) and its sampled variant
(Spectraformer Sec. 3.3; docs/methods.md#sgq)."""

from __future__ import annotations

import numpy as np

from rfbench.compute.features.base import Projections, WeightsSampler, full_projections
from rfbench.compute.features.registry import register_weights
from rfbench.compute.features.weights.blocks import haar_frames, n_blocks

_NODE = np.sqrt(3.0)


def sparse_grid(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes (2d+1, d) = [0_d; √3 e_1..e_d; −√3 e_1..e_d] and weights [1 − d/3, 1/6, …]."""
    nodes = np.concatenate([np.zeros((1, d)), _NODE * np.eye(d), -_NODE * np.eye(d)])
    weights = np.concatenate([[1.0 - d / 3.0], np.full(2 * d, 1.0 / 6.0)])
    return nodes, weights


@register_weights
class SGQ(WeightsSampler):
    """SGQ-det: the deterministic signed-weight sparse grid (Dao et al. 2017; Spectraformer §3.3;
    docs/methods.md#sgq); the weights go through ``Projections.weights``, fixed count 2d + 1.

    Option ``rotations``: 0 (the plain grid), K ≥ 1 Haar-rotated copies with weights a_j/K (rotation
    invariant, frames work) or "auto" (the fewest copies with at least m projections); never
    truncated."""

    name = "sgq"
    description = "degree-3 sparse-grid quadrature, 2d+1 signed-weight nodes (optional rotations)"
    paper = "Spectraformer §3.3 (SGQ); Dao et al. 2017"
    marginally_gaussian = False
    fixed_count = True

    def __init__(self, rotations: int | str = 0) -> None:
        if rotations != "auto" and (
            isinstance(rotations, bool | str) or int(rotations) != rotations or rotations < 0
        ):
            raise ValueError(f"sgq rotations must be 'auto' or an integer >= 0, got {rotations!r}")
        self.rotations = rotations if rotations == "auto" else int(rotations)
        self.rotation_invariant = rotations == "auto" or self.rotations > 0

    def copies(self, d: int, m: int) -> int:
        """K, the number of rotated copies (0: the plain grid)."""
        return n_blocks(m, 2 * d + 1) if self.rotations == "auto" else self.rotations

    def _sample_frame(
        self, rng: np.random.Generator, d: int, m: int, draws: int, k: int
    ) -> Projections:
        nodes, weights = sparse_grid(d)
        K = self.copies(d, m)
        if K == 0:
            W = np.broadcast_to(nodes, (draws,) + nodes.shape)
            return Projections(np.array(W), np.sum(W**2, axis=-1), d, weights)
        R = haar_frames(rng, draws * K, d, k).reshape(draws, K, d, k)
        W = (nodes @ R).reshape(draws, K * (2 * d + 1), k)
        sq = np.tile(np.sum(nodes**2, axis=-1), (draws, K))
        return Projections(W, sq, d, np.tile(weights, K) / K)


@register_weights
class SampledSGQ(WeightsSampler):
    """SGQ-sampled: m rows with i.i.d. entries in {−√3, 0, √3}, probabilities {1/6, 2/3, 1/6}
    (Spectraformer Sec. 3.3; docs/methods.md#sgq); not Gaussian, so biased for exponential features.
    """

    name = "sgq-sampled"
    description = "i.i.d. entries from the 3-point Gauss-Hermite rule {-sqrt3, 0, sqrt3}"
    paper = "Spectraformer §3.3 (SGQ, sampled variant)"
    marginally_gaussian = False

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        u = rng.random((draws, m, d))
        W = _NODE * ((u >= 5.0 / 6.0).astype(float) - (u < 1.0 / 6.0))
        return full_projections(W)
