"""Monte Carlo couplings with Gaussian marginals: iid, ORF, SimRF, SimRF+ (Reid et al. 2023;
docs/methods.md#couplings). All are rotation invariant, so each can be drawn in a k-dimensional
frame."""

from __future__ import annotations

import math

import numpy as np

from rfbench.compute.features.base import Projections, WeightsSampler, full_projections
from rfbench.compute.features.registry import register_weights
from rfbench.compute.features.weights.blocks import (
    chi_norms,
    haar_blocks,
    haar_frames,
    n_blocks,
    stacked,
)


@register_weights
class IID(WeightsSampler):
    """ω_i ~ N(0, I_d) independently."""

    name = "iid"
    description = "independent Gaussian rows"
    independent_rows = True
    paper = "HRF, SimRF (IIDRF), Spectraformer (Base)"
    rotation_invariant = True

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        return full_projections(rng.standard_normal((draws, m, d)))

    def _sample_frame(self, rng, d: int, m: int, draws: int, k: int) -> Projections:
        W = rng.standard_normal((draws, m, k))
        rest = rng.chisquare(d - k, size=(draws, m))
        return Projections(W, np.einsum("bmk,bmk->bm", W, W) + rest, d)

    def from_gaussian(self, G: np.ndarray, m: int) -> np.ndarray:
        """G's first m rows (see :meth:`WeightsSampler.from_gaussian`)."""
        return G[:, :m]

    def draw_flops(self, count: float, d: int) -> float:
        """P·d Gaussian samples."""
        return float(count * d)


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

    def _sample_frame(self, rng, d: int, m: int, draws: int, k: int) -> Projections:
        return stacked(lambda g, c, dd: self._blocks(g, c, dd, k), rng, d, m, draws)

    #: FLOPs of a block's fixed directions B applied to R (SimRF's simplex rotation: 2d³)
    directions_flops_per_d3: float = 0.0

    def draw_flops(self, count: float, d: int) -> float:
        """⌈P/d⌉ blocks of a d×d Gaussian and its Householder QR, d² + (4/3)d³, plus the
        directions (SimRF: 2d³)."""
        return math.ceil(count / d) * (d**2 + (4 / 3 + self.directions_flops_per_d3) * d**3)

    def from_gaussian(self, G: np.ndarray, m: int) -> np.ndarray:
        """Blocks D·B·R from G's d×d blocks (G = L·Q): D the Gaussian rows' own norms (χ_d), R the
        Haar rotation Q, independent of D; B the coupling's directions for those norms."""
        draws, rows, d = G.shape
        norms, R = haar_blocks(G.reshape(draws, rows // d, d, d))
        B = self.directions(None, norms.reshape(-1, d), d).reshape(norms.shape + (d,))
        return (norms[..., None] * (B @ R)).reshape(draws, rows, d)[:, :m]


@register_weights
class ORF(_OrthogonalBlocks):
    """Orthogonal random features W = D R, R Haar, D ~ χ_d (Yu et al. 2016; SimRF Sec. 3, Eq. 8-9;
    docs/methods.md#simrf)."""

    name = "orf"
    description = "orthogonal blocks, Haar rotation, chi_d norms"
    paper = "SimRF (ORF), Spectraformer eq. 21"


def simplex_directions(d: int) -> np.ndarray:
    """The fixed simplex matrix S (SimRF Eq. 9, reconstructed in docs/methods.md#simrf).

    Rows are unit vectors with pairwise cosines -1/(d-1), summing to zero, last coordinate 0:
    s_i = √(d/(d-1)) e_i - (√d+1)/(d-1)^{3/2} (1,…,1,0) for i < d, s_d = (d-1)^{-1/2} (1,…,1,0).
    """
    if d < 2:
        raise ValueError(f"simplex couplings need d >= 2 input features, got {d} feature(s)")
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
    directions_flops_per_d3 = 2.0

    def directions(self, rng: np.random.Generator, norms: np.ndarray, d: int) -> np.ndarray:
        return np.broadcast_to(simplex_directions(d), (norms.shape[0], d, d))


def simplex_plus_directions(norms: np.ndarray, passes: int = 5) -> np.ndarray:
    """SimRF+ directions S′ for given norms (SimRF Eqs. 16–17; docs/methods.md#simrf "SimRFs+").

    ``norms`` (count, d) are the w_i of each block. Starting from the simplex, sweep i = 1..d in
    place (Gauss–Seidel): r_i = Σ_{j≠i} w_j ŝ_j, ŝ_i ← −r_i/‖r_i‖; ``passes`` full sweeps. When a
    closed loop exists (max_i w_i ≤ Σ_{j≠i} w_j) the weighted resultant Σ_i w_i ŝ_i → 0, the
    minimiser of the truncated conformity (SimRF Eq. 15). Returns (count, d, d), rows ŝ_i.
    """
    count, d = norms.shape
    w = np.ascontiguousarray(norms.T)[..., None]  # (d, count, 1): vector i is contiguous
    S = np.array(np.broadcast_to(simplex_directions(d)[:, None, :], (d, count, d)))
    total = np.sum(w * S, axis=0)
    for _ in range(passes):
        for i in range(d):
            rest = total - w[i] * S[i]
            length = np.sqrt(np.einsum("cj,cj->c", rest, rest))[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                new = -rest / length
            bad = ~(length[:, 0] > 0)  # r_i = 0 has probability 0; keep ŝ_i then
            new[bad] = S[i, bad]
            S[i] = new
            total = rest + w[i] * new
    return np.ascontiguousarray(np.swapaxes(S, 0, 1))


@register_weights
class SimRFPlus(_OrthogonalBlocks):
    """SimRF+ (SimRF Eqs. 16–17): W = D S′ R with S′ optimised for the block's own norms D
    (docs/methods.md#simrf). Options: ``passes`` (default 5, the code's ``sim_plus_iter``) and
    ``code_compat`` (the released code: one D and S′ per draw shared by its blocks,
    #simrf-erratum-7)."""

    name = "simrf-plus"
    description = "SimRF+: simplex directions optimised for the block's norms (weight-dependent)"
    paper = "SimRF Eqs. 16-17 (SimRFs+)"

    directions_flops_per_d3 = 2.0  # as SimRF (the Gauss–Seidel passes are O(passes·d²))

    def __init__(self, passes: int = 5, code_compat: bool = False) -> None:
        if isinstance(passes, bool) or int(passes) != passes or passes < 0:
            raise ValueError(f"simrf-plus passes must be a non-negative integer, got {passes!r}")
        if not isinstance(code_compat, bool | np.bool_):
            raise ValueError(f"simrf-plus code_compat must be true or false, got {code_compat!r}")
        self.passes, self.code_compat = int(passes), bool(code_compat)

    def directions(self, rng: np.random.Generator, norms: np.ndarray, d: int) -> np.ndarray:
        return simplex_plus_directions(norms, self.passes)

    def from_gaussian(self, G: np.ndarray, m: int) -> np.ndarray | None:
        """As the other orthogonal blocks, except in the released code's block sharing."""
        return None if self.code_compat else super().from_gaussian(G, m)

    def _sample_frame(self, rng, d: int, m: int, draws: int, k: int) -> Projections:
        if self.code_compat:
            return self._shared_blocks(rng, d, m, draws, k)
        return super()._sample_frame(rng, d, m, draws, k)

    def _shared_blocks(
        self, rng: np.random.Generator, d: int, m: int, draws: int, k: int
    ) -> Projections:
        """Code-compat: one D and S′ per draw, a fresh Haar R (d×k) for each of its blocks."""
        nb = n_blocks(m, d)
        norms = chi_norms(rng, (draws, d), d)
        R = haar_frames(rng, draws * nb, d, k).reshape(draws, nb, d, k)
        rows = self.directions(rng, norms, d)[:, None] @ R
        W = (norms[:, None, :, None] * rows).reshape(draws, nb * d, k)[:, :m]
        sq = np.tile(norms**2, (1, nb))[:, :m]
        return Projections(np.ascontiguousarray(W), sq, d)
