"""Fast Walsh–Hadamard transforms and the projections of Hadamard couplings applied through them
(docs/architecture.md#structured-projections).

``fwht`` uses ``fht-cpu`` (``pip install 'rfbench[fast]'``) when installed, else a
Kronecker-factored numpy transform; both equal ``x @ scipy.linalg.hadamard(n)`` to round-off."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from rfbench.compute.features.base import Projections, check_inputs

try:  # optional: prebuilt wheels for Linux x86_64 / aarch64 only
    from fht_cpu import fht as _fht_cpu
except ImportError:  # pragma: no cover - depends on the environment
    _fht_cpu = None

#: whether the SIMD transform of ``fht-cpu`` is used (else :func:`fwht_numpy`)
HAVE_FHT_CPU = _fht_cpu is not None

#: d′ from which ``StructuredProjections.project`` applies the chain instead of X Wᵀ: the
#: crossover measured by ``rfbench run cost`` (part ``projection``; benchmarks/bench_structured.py)
#: on one BLAS thread — with fht-cpu the chain is 1× X Wᵀ at d′ = 64 and 2× at 128; the numpy
#: transform only wins from d′ = 1024
FAST_FROM = 128 if HAVE_FHT_CPU else 1024


#: the largest Hadamard matrix applied as one dense product by the numpy transform
_DENSE_MAX = 64


@lru_cache(maxsize=16)
def _sylvester(n: int) -> np.ndarray:
    H = np.ones((1, 1))
    while H.shape[0] < n:
        H = np.block([[H, H], [H, -H]])
    H.setflags(write=False)
    return H


def fwht_numpy(x: np.ndarray) -> np.ndarray:
    """Unnormalised Walsh–Hadamard transform (Sylvester order) along the last axis, numpy only.

    Uses H_{ab} = H_a ⊗ H_b: the input is viewed as (…, a, b) and multiplied by the dense H_b
    and H_a (b, a ≤ 64, recursively for larger n) — O(n (a + b)) BLAS work per row instead of the
    n log₂ n butterfly, which in numpy is dominated by per-stage overhead.

    Parameters
    ----------
    x : ndarray, shape (..., n)
        Real input; n must be a power of two.

    Returns
    -------
    ndarray, shape (..., n)
        ``x @ H_n`` with H_n = scipy.linalg.hadamard(n) (H_n is symmetric), a new array.
    """
    shape = x.shape
    n = shape[-1]
    y = np.asarray(x, dtype=float).reshape(-1, n)
    if n <= _DENSE_MAX:
        return (y @ _sylvester(n)).reshape(shape)
    b = _DENSE_MAX
    a = n // b
    y = (y.reshape(-1, a, b) @ _sylvester(b)).swapaxes(-1, -2)  # (rows, b, a)
    y = fwht_numpy(np.ascontiguousarray(y)).swapaxes(-1, -2)  # H_a along the a axis
    return np.ascontiguousarray(y).reshape(shape)


def fwht(x: np.ndarray, use_fht_cpu: bool | None = None, inplace: bool = False) -> np.ndarray:
    """Unnormalised Walsh–Hadamard transform (Sylvester order) along the last axis.

    Parameters
    ----------
    x : ndarray, shape (..., n)
        Real input; n must be a power of two.
    use_fht_cpu : bool, optional
        Force (True) or forbid (False) the ``fht-cpu`` kernel; default: use it when installed.
    inplace : bool
        Transform ``x`` itself if it is a C-contiguous float64 array and fht-cpu is used (the
        result is then ``x``); otherwise ``x`` is not modified.

    Returns
    -------
    ndarray, shape (..., n), float64
        ``x @ scipy.linalg.hadamard(n)``.
    """
    n = x.shape[-1]
    if n & (n - 1) or n < 1:
        raise ValueError(f"the Walsh–Hadamard transform needs a power-of-two length, got {n}")
    use = HAVE_FHT_CPU if use_fht_cpu is None else use_fht_cpu
    if use and _fht_cpu is None:
        raise RuntimeError("fht-cpu is not installed (pip install 'rfbench[fast]')")
    if not use:
        return fwht_numpy(x)
    owned = inplace and x.dtype == np.float64 and x.flags["C_CONTIGUOUS"]
    y = (x if owned else np.array(x, dtype=float, order="C")).reshape(-1, n)
    if y.shape[0]:
        # one thread: rfbench parallelises over jobs, and BLAS is pinned to one thread per worker
        _fht_cpu(y, axis=-1, num_threads=1)
    return y.reshape(x.shape)


def simplex_apply(z: np.ndarray) -> np.ndarray:
    """z Sᵀ for the simplex matrix S = ``simplex_directions(n)`` in O(n) per row.

    S = √(n/(n−1)) I − c·1·uᵀ with u = (1,…,1,0) and c = (√n+1)/(n−1)^{3/2}, last row uᵀ/√(n−1)
    (SimRF Eq. 9; docs/methods.md#simrf).

    Parameters
    ----------
    z : ndarray, shape (..., n), n ≥ 2

    Returns
    -------
    ndarray, shape (..., n)
    """
    n = z.shape[-1]
    total = np.sum(z[..., :-1], axis=-1, keepdims=True)
    out = np.sqrt(n / (n - 1)) * z - (np.sqrt(n) + 1) / (n - 1) ** 1.5 * total
    out[..., -1:] = total / np.sqrt(n - 1)
    return out


def _permute(Z: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Z[b, k, :, perm[b, k]]: (draws, blocks, N, n) with perm (draws, blocks, n)."""
    draws, blocks, N, n = Z.shape
    if N < draws * blocks:  # many small blocks: one gather (index arrays of Z's size)
        return np.take_along_axis(Z, np.broadcast_to(perm[:, :, None, :], Z.shape), axis=-1)
    flat, index = Z.reshape(-1, N, n), perm.reshape(-1, n)
    out = np.empty_like(flat)
    for i in range(flat.shape[0]):  # few large blocks: a column gather each, no index arrays
        np.take(flat[i], index[i], axis=-1, out=out[i])
    return out.reshape(Z.shape)


@dataclass(frozen=True)
class HadamardChain:
    """Stacked blocks A_b = ``scale`` · F_k ⋯ F_1 · diag(signs_b) P, applied without materialising.

    P zero-pads x ∈ R^d to R^n (n = d′); each factor F is ``("hadamard", None)`` (H_n/√n),
    ``("diag", (draws, blocks, n))``, ``("perm", (draws, blocks, n) int)`` (row j of the result is
    row perm[j] of its input) or ``("simplex", None)`` (:func:`simplex_apply`). Block b of a draw
    gives rows b·n … b·n + n − 1; the first m rows of the stack are the projections.

    Attributes
    ----------
    signs : ndarray, shape (draws, blocks, d)
        The input diagonal (Rademacher signs D₁ or B).
    steps : tuple of (str, ndarray or None)
        The factors F_1 … F_k in order of application.
    n, m : int
        Padded block size and number of rows kept.
    scale : float
        A constant factor of every row.
    """

    signs: np.ndarray
    steps: tuple[tuple[str, np.ndarray | None], ...]
    n: int
    m: int
    scale: float = 1.0

    def apply(self, X: np.ndarray, use_fht_cpu: bool | None = None) -> np.ndarray:
        """ωᵀx for every draw, input and row, in O(blocks·n log n) per input and draw.

        Parameters
        ----------
        X : ndarray, shape (N, d) or (draws, N, d)
        use_fht_cpu : bool, optional
            Passed to :func:`fwht`.

        Returns
        -------
        ndarray, shape (draws, N, m), float64
        """
        X = np.asarray(X, dtype=float)
        if X.ndim == 2:
            X = X[None]
        (draws, blocks, d), n = self.signs.shape, self.n
        N = X.shape[1]
        Z = np.zeros((draws, blocks, N, n))
        np.multiply(X[:, None, :, :], self.signs[:, :, None, :], out=Z[..., :d])
        factor = self.scale
        for kind, arg in self.steps:
            if kind == "hadamard":
                Z = fwht(Z, use_fht_cpu, inplace=True)  # Z is always a fresh array here
                factor /= np.sqrt(n)
            elif kind == "diag":
                Z *= arg[:, :, None, :]
            elif kind == "perm":
                Z = _permute(Z, arg)
            elif kind == "simplex":
                Z = simplex_apply(Z)
            else:  # pragma: no cover - constructed in rfbench only
                raise ValueError(f"unknown Hadamard chain step {kind!r}")
        Z *= factor
        out = Z.transpose(0, 2, 1, 3).reshape(draws, N, blocks * n)
        return out[..., : self.m]

    def rows(self, use_fht_cpu: bool | None = None) -> np.ndarray:
        """The materialised projections: (draws, m, d) (the chain applied to the unit vectors)."""
        eye = np.eye(self.signs.shape[2])[None]
        return np.ascontiguousarray(np.swapaxes(self.apply(eye, use_fht_cpu), -1, -2))

    def scaled(self, factor: float) -> HadamardChain:
        """The chain of every row times ``factor``."""
        return replace(self, scale=self.scale * factor)


@dataclass(frozen=True)
class StructuredProjections(Projections):
    """Projections whose rows are a :class:`HadamardChain`: ``W`` holds the materialised rows
    (the public contract), ``project`` applies the chain in O(d′ log d′) when d′ ≥ ``FAST_FROM``
    (or when ``fast`` forces it: True always, False never)."""

    chain: HadamardChain | None = None
    fast: bool | None = None

    def use_chain(self) -> bool:
        """Whether ``project`` applies the chain instead of X Wᵀ."""
        if self.chain is None:
            return False
        return self.chain.n >= FAST_FROM if self.fast is None else self.fast

    def project(self, X: np.ndarray) -> np.ndarray:
        """ωᵀx for every draw, row and projection: (draws, N, M). X is (N, k) or (draws, N, k)."""
        if not self.use_chain():
            return super().project(X)
        return self.chain.apply(check_inputs(X, self.frame))

    def scaled(self, factor: float) -> StructuredProjections:
        chain = None if self.chain is None else self.chain.scaled(factor)
        return replace(self, W=self.W * factor, sq_norms=self.sq_norms * factor**2, chain=chain)

    def with_fast(self, fast: bool | None) -> StructuredProjections:
        """The same projections, applied by the chain (True), by X Wᵀ (False) or by d′ (None)."""
        return replace(self, fast=fast)
