"""Hadamard and circulant couplings: SORF, fast ORF, fast SimRF, FastFood_F, SCRF
(docs/methods.md#structured, #stacking; Spectraformer Sec. 3.3; SimRF §4.2).

Hadamard blocks live in d′ = the next power of two ≥ d (first d columns kept) and are applied as a
:class:`~rfbench.compute.features.weights.hadamard.HadamardChain`; ``dense_block`` is the dense
reference construction of the tests, with the same random stream."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import scipy.linalg

from rfbench.compute.features.base import Projections, WeightsSampler
from rfbench.compute.features.registry import register_weights
from rfbench.compute.features.weights.blocks import chi_norms, n_blocks, stacked
from rfbench.compute.features.weights.hadamard import HadamardChain, StructuredProjections
from rfbench.compute.features.weights.mc import simplex_directions
from rfbench.compute.kernels import sq_norms


def padded_dim(d: int) -> int:
    """d′: the smallest power of two ≥ d."""
    return 1 << (int(d) - 1).bit_length()


@lru_cache(maxsize=16)
def normalised_hadamard(n: int) -> np.ndarray:
    """H_n/√n (Sylvester order), orthogonal: H_1 = (1), H_i = [[H, H], [H, -H]]/√2 (SimRF B.2)."""
    H = scipy.linalg.hadamard(n).astype(float) / np.sqrt(n)
    H.setflags(write=False)
    return H


def rademacher(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """i.i.d. ±1 entries."""
    return 2.0 * rng.integers(0, 2, size=shape) - 1.0


def hd_product(rng: np.random.Generator, count: int, n: int, d: int, k: int = 3) -> np.ndarray:
    """``count`` products H D_k ⋯ H D_1 (normalised H, Rademacher D_i), first d columns.

    Each full n×n product is orthogonal (SimRF §4.2: R̃ with k = 3; SORF's H D₁ H D₂ H D₃ has
    the same law). Returns (count, n, d).
    """
    H = normalised_hadamard(n)
    X = H[:, :d] * rademacher(rng, (count, 1, d))
    for _ in range(k - 1):
        X = H @ (rademacher(rng, (count, n, 1)) * X)
    return X


def _with_norms(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return W, sq_norms(W)


Chain = tuple[np.ndarray, list[tuple[str, np.ndarray | None]], float]


def hd_chain(rng: np.random.Generator, count: int, n: int, d: int, k: int = 3) -> Chain:
    """The factors of ``hd_product`` (same random stream): D₁ signs (count, d), then k − 1 times
    H, D_i (count, n), then H; scale 1."""
    signs = rademacher(rng, (count, 1, d))[:, 0]
    steps: list[tuple[str, np.ndarray | None]] = [("hadamard", None)]
    for _ in range(k - 1):
        steps += [("diag", rademacher(rng, (count, n, 1))[..., 0]), ("hadamard", None)]
    return signs, steps, 1.0


class _PaddedBlocks(WeightsSampler):
    """Stacked d′×d′ blocks (first d columns kept), d′ = next power of two ≥ d."""

    marginally_gaussian = False

    #: extra FLOPs per block, in units of d′·d (simrf-fast's O(d′) simplex rotation of d rows: 3)
    extra_flops_per_block: float = 0.0

    def draw_flops(self, count: float, d: int) -> float:
        """⌈P/d′⌉ blocks of three Hadamard–Rademacher products materialised by fast transforms of
        the d unit vectors, 3·d′·d·log₂d′ each (d′ = next power of two), plus the extra."""
        dp = padded_dim(d)
        per_block = 3 * dp * d * math.log2(max(dp, 2)) + self.extra_flops_per_block * dp * d
        return math.ceil(count / dp) * per_block

    def chain(self, rng: np.random.Generator, count: int, n: int, d: int) -> Chain:
        """The factors of ``count`` blocks: input signs (count, d), the steps of a
        :class:`HadamardChain` with per-block arrays (count, n), and a constant scale."""
        raise NotImplementedError

    def dense_block(self, rng: np.random.Generator, count: int, n: int, d: int) -> np.ndarray:
        """The reference construction by dense Hadamard matrices: (count, n, d), the rows of
        ``count`` blocks restricted to the first d columns (same random stream as ``chain``)."""
        raise NotImplementedError

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        n = padded_dim(d)
        nb = n_blocks(m, n)
        signs, steps, scale = self.chain(rng, draws * nb, n, d)

        def per_draw(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a.reshape(draws, nb, *a.shape[1:])

        chain = HadamardChain(
            per_draw(signs), tuple((kind, per_draw(a)) for kind, a in steps), n, m, scale
        )
        W = chain.rows()
        return StructuredProjections(W, sq_norms(W), d, chain=chain)

    def sample_dense(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        """``sample`` by the dense reference construction (dense ``Projections``)."""
        n = padded_dim(d)
        return stacked(
            lambda g, c, dd: _with_norms(self.dense_block(g, c, n, dd)), rng, d, m, draws, block=n
        )


@register_weights
class SORF(_PaddedBlocks):
    """Structured ORF √d′ H D₁ H D₂ H D₃, normalised H (Yu et al. 2016; Spectraformer eq. 22;
    docs/methods.md#structured): rows of norm √d′ with E[ωωᵀ] = I, not Gaussian."""

    name = "sorf"
    description = "structured orthogonal blocks sqrt(d') H D1 H D2 H D3 (Hadamard, Rademacher)"
    paper = "Spectraformer eq. 22 (SORF); Yu et al. 2016"

    def chain(self, rng: np.random.Generator, count: int, n: int, d: int) -> Chain:
        signs, steps, _ = hd_chain(rng, count, n, d)
        return signs, steps, float(np.sqrt(n))

    def dense_block(self, rng: np.random.Generator, count: int, n: int, d: int) -> np.ndarray:
        return np.sqrt(n) * hd_product(rng, count, n, d)


@register_weights
class FastORF(_PaddedBlocks):
    """Fast ORF: D R̃ with R̃ = H D₃ H D₂ H D₁ and D ~ χ_{d′} (SimRF §4.2, App. B.2, Table 3).

    The SimRF experiments use m = d′ (one block); other m stack blocks. Not exactly Gaussian.
    """

    name = "orf-fast"
    description = "fast ORF: chi_d' norms times rows of an HD-product (k = 3)"
    paper = "SimRF §4.2, App. B.2 (fast ORFs)"

    def chain(self, rng: np.random.Generator, count: int, n: int, d: int) -> Chain:
        norms = chi_norms(rng, (count, n), n)
        signs, steps, scale = hd_chain(rng, count, n, d)
        return signs, [*steps, ("diag", norms)], scale

    def dense_block(self, rng: np.random.Generator, count: int, n: int, d: int) -> np.ndarray:
        norms = chi_norms(rng, (count, n), n)
        return norms[..., None] * hd_product(rng, count, n, d)


@register_weights
class FastSimRF(_PaddedBlocks):
    """Fast SimRF: D S R̃ with the d′-simplex S and R̃ an HD-product (SimRF §4.2, Table 3).

    Rows of a full block are χ_{d′}-scaled unit vectors with pairwise cosines −1/(d′−1).
    """

    name = "simrf-fast"
    description = "fast SimRF: chi_d' norms, simplex directions, HD-product rotation (k = 3)"
    paper = "SimRF §4.2, App. B.2 (fast SimRFs)"
    extra_flops_per_block = 3.0

    def chain(self, rng: np.random.Generator, count: int, n: int, d: int) -> Chain:
        simplex_directions(n)  # raises for d′ < 2
        norms = chi_norms(rng, (count, n), n)
        signs, steps, scale = hd_chain(rng, count, n, d)
        return signs, [*steps, ("simplex", None), ("diag", norms)], scale

    def dense_block(self, rng: np.random.Generator, count: int, n: int, d: int) -> np.ndarray:
        S = simplex_directions(n)  # raises for d′ < 2
        norms = chi_norms(rng, (count, n), n)
        return norms[..., None] * (S @ hd_product(rng, count, n, d))


@register_weights
class FastFood(_PaddedBlocks):
    """FastFood_F (Le et al. 2013) V = √d′ (s/‖G‖_F) Hn G Π Hn B with χ_{d′} row norms s:
    Spectraformer eq. 17 with its normalisation corrected (docs/methods.md#structured,
    #spectraformer-erratum-8)."""

    name = "fastfood"
    description = "FastFood_F: S H G Pi H B / sqrt(d') with chi_d' row norms"
    paper = "Spectraformer eq. 17 (corrected); Le et al. 2013"

    def chain(self, rng: np.random.Generator, count: int, n: int, d: int) -> Chain:
        signs = rademacher(rng, (count, 1, d))[:, 0]  # B
        perm = rng.permuted(np.tile(np.arange(n), (count, 1)), axis=1)  # Π
        G = rng.standard_normal((count, n))
        scale = np.sqrt(n) * chi_norms(rng, (count, n), n) / np.linalg.norm(G, axis=1)[:, None]
        steps = [("hadamard", None), ("perm", perm), ("diag", G), ("hadamard", None)]
        return signs, [*steps, ("diag", scale)], 1.0

    def dense_block(self, rng: np.random.Generator, count: int, n: int, d: int) -> np.ndarray:
        H = normalised_hadamard(n)
        X = H[:, :d] * rademacher(rng, (count, 1, d))  # Hn B
        perm = rng.permuted(np.tile(np.arange(n), (count, 1)), axis=1)
        X = np.take_along_axis(X, perm[..., None], axis=1)  # Π Hn B
        G = rng.standard_normal((count, n))
        X = H @ (G[..., None] * X)  # Hn G Π Hn B
        scale = np.sqrt(n) * chi_norms(rng, (count, n), n) / np.linalg.norm(G, axis=1)[:, None]
        return scale[..., None] * X


def circulant_apply(c: np.ndarray, x: np.ndarray) -> np.ndarray:
    """circ(c) x = ifft(fft(c)·fft(x)) along the last axis (Spectraformer eq. 19)."""
    return np.fft.irfft(np.fft.rfft(c) * np.fft.rfft(x), n=c.shape[-1])


@register_weights
class SCRF(WeightsSampler):
    """Signed circulant RFs diag(ε) circ(c), c ~ N(0, I_d), ⌈m/d⌉ blocks (Feng et al. 2015;
    Spectraformer eqs. 18–19; docs/methods.md#structured): rows exactly N(0, I_d), materialised by
    an index gather (``circulant_apply`` is the FFT form the tests check it against)."""

    name = "scrf"
    description = "signed circulant blocks diag(eps) circ(c), c ~ N(0, I)"
    paper = "Spectraformer eqs. 18-19 (SCRF); Feng et al. 2015"

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        index = (np.arange(d)[:, None] - np.arange(d)[None, :]) % d

        def blocks(g: np.random.Generator, count: int, dd: int):
            c = g.standard_normal((count, dd))
            W = rademacher(g, (count, dd, 1)) * c[:, index]
            return W, np.broadcast_to(sq_norms(c)[:, None], (count, dd))

        return stacked(blocks, rng, d, m, draws)
