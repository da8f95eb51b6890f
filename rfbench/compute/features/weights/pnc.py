"""Pairwise norm coupling (PNC): ORF blocks whose rows (2k, 2k+1) have countermonotone χ_d norms
F_d⁻¹(U), F_d⁻¹(1 − U) (VRC, Reid et al., ICLR 2025, Thm 3.2 / Eq. 7; docs/methods.md#pnc).

Option ``rho``: a Gaussian copula of correlation ρ instead (−1: exact PNC, 0: ORF)."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr
from scipy.stats import chi

from rfbench.compute.features.registry import register_weights
from rfbench.compute.features.weights.blocks import chi_norms, haar_frames
from rfbench.compute.features.weights.mc import _OrthogonalBlocks


def _chi_quantile(g: np.ndarray, d: int) -> np.ndarray:
    """F_d⁻¹(Φ(g)) elementwise (a standard normal g gives χ_d values), accurate in both tails (the
    upper one through the survival function)."""
    g = np.asarray(g, dtype=float)
    return np.where(g > 0, chi.isf(ndtr(-g), d), chi.ppf(ndtr(g), d))


def paired_norms(rng: np.random.Generator, count: int, d: int, rho: float = -1.0) -> np.ndarray:
    """χ_d norms of ``count`` blocks of d rows, rows (2k, 2k+1) coupled (module doc).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of every random number.
    count : int
        Number of independent blocks.
    d : int
        Rows per block (= the input dimension), and the degrees of freedom of χ_d.
    rho : float
        Correlation of the Gaussian copula of each pair; −1 is the exact countermonotone pair
        (w_b = F_d⁻¹(1 − F_d(w_a)) to rounding).

    Returns
    -------
    ndarray, shape (count, d)
        The norms; each is marginally χ_d.
    """
    pairs = d // 2
    g = rng.standard_normal((count, pairs))
    if rho == -1.0:
        partner = -g
    else:
        partner = rho * g + np.sqrt(1.0 - rho**2) * rng.standard_normal((count, pairs))
    norms = np.empty((count, d))
    norms[:, 0 : 2 * pairs : 2] = _chi_quantile(g, d)
    norms[:, 1 : 2 * pairs : 2] = _chi_quantile(partner, d)
    if d % 2:
        norms[:, -1] = chi_norms(rng, (count,), d)
    return norms


@register_weights
class PNC(_OrthogonalBlocks):
    """Orthogonal blocks with pairwise countermonotone χ_d norms (VRC, Thm 3.2 / Eq. 7 applied
    pairwise; the rule is inferred, docs/methods.md#pnc). Option ``rho`` in [−1, 1] (module doc)."""

    name = "pnc"
    description = "orthogonal blocks, Haar rotation, pairwise countermonotone chi_d norms (PNC)"
    paper = "VRC (Reid et al., ICLR 2025) Thm 3.2, Eq. 7 (pairwise norm coupling)"

    def __init__(self, rho: float = -1.0) -> None:
        if isinstance(rho, bool) or not np.isfinite(rho) or not -1.0 <= float(rho) <= 1.0:
            raise ValueError(f"pnc rho must be a correlation in [-1, 1], got {rho!r}")
        self.rho = float(rho)

    def from_gaussian(self, G: np.ndarray, m: int) -> None:
        """None: the coupled norms are not the Gaussian rows' own (no shared-array draws)."""
        return None

    def _blocks(self, rng: np.random.Generator, count: int, d: int, k: int):
        norms = paired_norms(rng, count, d, self.rho)
        R = haar_frames(rng, count, d, k)
        return norms[..., None] * R, norms**2
