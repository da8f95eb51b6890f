"""Monte Carlo couplings with Gaussian marginals: iid, ORF, SimRF, SimRF+ (Reid et al. 2023).

All are rotation invariant (W and W·U have the same law for orthogonal U), so each can be drawn
restricted to a k-dimensional frame: W[:, :k] with the full row norms, at O(d·k²) per block instead
of O(d³) (DESIGN §3).
"""

from __future__ import annotations

import numpy as np

from rfbench.features.base import Projections, WeightsSampler, full_projections
from rfbench.features.registry import register_weights
from rfbench.features.weights.blocks import chi_norms, haar_frames, stacked


@register_weights
class IID(WeightsSampler):
    """ω_i ~ N(0, I_d) independently."""

    name = "iid"
    description = "independent Gaussian rows"
    paper = "HRF, SimRF (IIDRF), Spectraformer (Base)"
    rotation_invariant = True

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        return full_projections(rng.standard_normal((draws, m, d)))

    def _sample_frame(self, rng, d: int, m: int, draws: int, k: int) -> Projections:
        W = rng.standard_normal((draws, m, k))
        rest = rng.chisquare(d - k, size=(draws, m))
        return Projections(W, np.einsum("bmk,bmk->bm", W, W) + rest, d)


class _OrthogonalBlocks(WeightsSampler):
    """Blocks D·B·R: χ_d norms D, fixed unit directions B (rows), Haar R (d×d or a d×k frame)."""

    rotation_invariant = True

    def directions(self, rng: np.random.Generator, norms: np.ndarray, d: int) -> np.ndarray:
        """Unit row directions before the rotation: (count, d, d). Identity for ORF."""
        return np.broadcast_to(np.eye(d), (norms.shape[0], d, d))

    def _blocks(self, rng: np.random.Generator, count: int, d: int, k: int):
        norms = chi_norms(rng, (count, d), d)
        R = haar_frames(rng, count, d, k)
        rows = self.directions(rng, norms, d) @ R
        return norms[..., None] * rows, norms**2

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        return stacked(lambda g, c, dd: self._blocks(g, c, dd, dd), rng, d, m, draws)

    def _sample_frame(self, rng, d: int, m: int, draws: int, k: int) -> Projections:
        return stacked(lambda g, c, dd: self._blocks(g, c, dd, k), rng, d, m, draws)


@register_weights
class ORF(_OrthogonalBlocks):
    """Orthogonal random features W = D R, R Haar, D ~ χ_d (Yu et al. 2016; SimRF §1.2)."""

    name = "orf"
    description = "orthogonal blocks, Haar rotation, chi_d norms"
    paper = "SimRF (ORF), Spectraformer eq. 21"


def simplex_directions(d: int) -> np.ndarray:
    """The fixed simplex matrix S (SimRF Eq. 9, reconstructed in spec/simrf.md §1.2).

    Rows are unit vectors with pairwise cosines -1/(d-1), summing to zero, last coordinate 0:
    s_i = √(d/(d-1)) e_i - (√d+1)/(d-1)^{3/2} (1,…,1,0) for i < d, s_d = (d-1)^{-1/2} (1,…,1,0).
    """
    if d < 2:
        raise ValueError(f"simplex couplings need d >= 2, got d = {d}")
    ones = np.ones(d)
    ones[-1] = 0.0
    S = np.sqrt(d / (d - 1)) * np.eye(d) - (np.sqrt(d) + 1) / (d - 1) ** 1.5 * ones
    S[-1] = ones / np.sqrt(d - 1)
    return S


@register_weights
class SimRF(_OrthogonalBlocks):
    """Simplex random features W = D S R (SimRF Eq. 8): maximally anti-correlated directions."""

    name = "simrf"
    description = "simplex blocks D S R, Haar rotation, chi_d norms"
    paper = "SimRF Eq. 8"

    def directions(self, rng: np.random.Generator, norms: np.ndarray, d: int) -> np.ndarray:
        return np.broadcast_to(simplex_directions(d), (norms.shape[0], d, d))
