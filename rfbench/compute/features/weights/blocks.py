"""Shared pieces of block couplings: Haar frames, χ norms, stacking blocks when m > d."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rfbench.compute.features.base import Projections


def haar_frames(rng: np.random.Generator, count: int, d: int, k: int | None = None) -> np.ndarray:
    """``count`` Haar-uniform d×k matrices with orthonormal columns (k = d: Haar on O(d)).

    QR of a Gaussian matrix with the signs of R's diagonal moved into Q, which makes Q exactly
    Haar (Mezzadri 2007); without the correction numpy's QR is not uniform.
    """
    return _signed_qr(rng.standard_normal((count, d, d if k is None else k)))


def _signed_qr(A: np.ndarray) -> np.ndarray:
    """Q of A = QR with the signs of R's diagonal moved into Q (0 counts as +)."""
    Q, R = np.linalg.qr(A)
    signs = np.sign(np.diagonal(R, axis1=-2, axis2=-1))
    signs[signs == 0] = 1.0
    return Q * signs[..., None, :]


def chi_norms(rng: np.random.Generator, shape: tuple[int, ...], d: int) -> np.ndarray:
    """χ_d-distributed lengths (the norms of N(0, I_d) vectors)."""
    return np.sqrt(rng.chisquare(d, size=shape))


def n_blocks(m: int, block: int) -> int:
    """ceil(m / block): stacked independent blocks, truncated to m rows (SimRF Sec. 3, footnote 2;
    docs/methods.md#stacking)."""
    return -(-m // block)


def stacked(
    block_sampler: Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]],
    rng: np.random.Generator,
    d: int,
    m: int,
    draws: int,
    block: int | None = None,
) -> Projections:
    """Stack independent blocks of ``block`` rows and keep the first m rows of each draw.

    ``block_sampler(rng, count, d)`` returns ``count`` blocks: rows (count, block, k) and their
    full squared norms (count, block).
    """
    block = d if block is None else block
    nb = n_blocks(m, block)
    W, sq = block_sampler(rng, draws * nb, d)
    k = W.shape[-1]
    W = W.reshape(draws, nb * W.shape[1], k)[:, :m]
    sq = sq.reshape(draws, -1)[:, :m]
    return Projections(np.ascontiguousarray(W), np.ascontiguousarray(sq), d)


def haar_blocks(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row norms ‖g_i‖, Haar Q) of Gaussian blocks G (..., d, d) = L Q, L lower triangular.

    The QR factorisation of Gᵀ with R's diagonal made positive gives a Haar-distributed Q
    independent of the row norms (which are χ_d): the two parts of an orthogonal block.
    """
    Qt = np.swapaxes(_signed_qr(np.swapaxes(G, -1, -2)), -1, -2)  # rows: a Haar frame
    return np.sqrt(np.sum(G**2, axis=-1)), Qt
