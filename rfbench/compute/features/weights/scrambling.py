"""Randomised Sobol' and Halton point sets for many draws at once: per draw a random linear
scrambling e = L a + s (mod b) of the digits plus a digital shift (Matoušek 1998; Owen 2003),
so every point is exactly uniform and nets stay nets (docs/methods.md#qmc)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from scipy.stats import qmc

from rfbench.compute.features.weights.ndtri import BLOCK

#: bits of a randomised point (the float64 mantissa); points are (k + ½)·2^-52. Fewer (say 32,
#: to scramble in uint32) would put every point on a coarser grid than float64 resolves: the
#: smallest t would be 2^-33 instead of 2^-53, cutting the Gaussian tails at |x| ≈ 6.3 instead
#: of 8.2, a change of law, not of round-off. The integer passes are not the cost anyway.
_BITS = 52
#: the exponent bits of 1.0: (x | _ONE) viewed as float64 is 1 + x/2^52
_ONE = np.uint64(0x3FF0000000000000)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


def _digits_needed(base: int, m: int) -> int:
    """The number of base-b digits of the indices 0..m−1 (at least one)."""
    k, span = 1, base
    while span < m:
        k, span = k + 1, span * base
    return k


@lru_cache(maxsize=32)
def sobol_generators(d: int, m: int) -> tuple[int, np.ndarray]:
    """(K, g): K = ⌈log2 m⌉ digits and the unscrambled Sobol' points of index 2^q (2^q < m) as
    K-bit integers, g (Q, d) read-only (integer bit p holds digit K − 1 − p).

    K bits hold the first m points exactly (the generator matrices are upper triangular), and
    point i is GF(2)-linear in i (scipy's Gray-code order included): the XOR of g_q over the set
    bits q of i. Checked here against scipy's m points. m a power of two gives a full
    (t, K, d)-net.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The balance properties", UserWarning)
        t = qmc.Sobol(d, scramble=False).random(m)
    K = _digits_needed(2, m)
    a = np.rint(np.ldexp(t, K)).astype(np.uint64)
    g = a[[1 << q for q in range(K) if 1 << q < m]]
    if not np.array_equal(_span(np.zeros((1, d), np.uint64), g[None], m)[0], a):
        raise RuntimeError("scipy's unscrambled Sobol' points are not linear in the index")
    g.setflags(write=False)
    return K, g


def _span(first: np.ndarray, gens: np.ndarray, m: int, out: np.ndarray | None = None) -> np.ndarray:
    """(draws, m, d) uint64: row i = first XOR gens[:, q] over the set bits q of i, by doubling
    (rows 2^q .. 2^(q+1) − 1 are rows 0 .. 2^q − 1 XOR gens[:, q]); first (draws, d)."""
    if out is None:
        out = np.empty((first.shape[0], m, first.shape[1]), dtype=np.uint64)
    out[:, 0] = first
    for q in range(gens.shape[1]):
        n = min(1 << q, m - (1 << q))
        np.bitwise_xor(out[:, :n], gens[:, q, None, :], out=out[:, 1 << q : (1 << q) + n])
    return out


def _random_bits(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(0, 1 << _BITS, size=shape, dtype=np.uint64)


def sobol_points(
    rng: np.random.Generator,
    d: int,
    m: int,
    draws: int,
    then: Callable[[np.ndarray], object] | None = None,
) -> np.ndarray:
    """(draws, m, d) Sobol' points, each draw with its own LMS + digital shift (52 bits).

    Column l of a draw's lower-triangular L is a 52-bit integer (bit l set, random bits below);
    L a is the XOR of the columns of a's set bits. As L and the unscrambled points are both
    linear (``sobol_generators``), a draw's point i is s XOR the images L g_q over the set bits
    q of i: K images per (draw, coordinate), then one doubling pass writes the m points (no
    per-point table lookup: 2.8x faster than one at d = 64, m = 128). The 52-bit x becomes
    (x + ½)·2^-52 exactly through the float64 mantissa. ``then`` (e.g. Φ⁻¹ in place) is
    applied to the points of each block of draws (about ``ndtri.BLOCK`` values) as soon as
    they are written, while they are in cache.
    """
    K, g = sobol_generators(d, m)
    # the digital shift, with the exponent bits of 1.0 set once here: the images XORed in below
    # touch only the 52 mantissa bits, so every entry already reads as the float 1 + x/2^52
    shift = _random_bits(rng, (draws, d)) | _ONE
    images = np.zeros((draws, len(g), d), dtype=np.uint64)  # L g_q
    for p in range(K):  # integer bit p is digit l = K − 1 − p (l = 0: the ½ digit)
        top = np.uint64(1 << (_BITS - K + p))
        col = (_random_bits(rng, (draws, d)) & (top - np.uint64(1))) | top
        images ^= col[:, None, :] & (((g >> np.uint64(p)) & np.uint64(1)) * _ALL)
    t = np.empty((draws, m, d))
    step = max(1, BLOCK // (m * d))
    for b in range(0, draws, step):
        block = t[b : b + step]
        _span(shift[b : b + step], images[b : b + step], m, out=block.view(np.uint64))
        block -= 1.0 - 2.0**-53  # exact (Sterbenz): 1 + x/2^52 − 1 + 2^-53
        if then is not None:
            then(block)
    return t


@lru_cache(maxsize=32)
def halton_digits(d: int, m: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """(bases (d,), digits): digits[j] (K_j, m) float64 are the base-b_j digits of 0..m−1,
    least significant first (the radical inverse puts digit k at b^-(k+1)).

    The bases are those of ``scipy.stats.qmc.Halton`` (the first d primes), read off its second
    unscrambled point 1/b_j.
    """
    bases = np.rint(1.0 / qmc.Halton(d, scramble=False).random(2)[1]).astype(np.int64)
    i = np.arange(m)
    digits = []
    for b in bases:
        powers = int(b) ** np.arange(_digits_needed(int(b), m))
        digits.append(((i // powers[:, None]) % b).astype(np.float64))
        digits[-1].setflags(write=False)
    bases.setflags(write=False)
    return bases, digits


def halton_points(rng: np.random.Generator, d: int, m: int, draws: int) -> np.ndarray:
    """(draws, m, d) Halton points, each draw with its own linear scrambling + digital shift.

    Digits of coordinate j (base b, K digits): e = (L a + s) mod b, one BLAS product for all
    draws per coordinate (small integers: exact in float64); then
    t = Σ_k e_k b^-(k+1) + u·b^-K with u ~ U[0, 1) per (draw, coordinate).
    """
    bases, digits = halton_digits(d, m)
    out = np.empty((d, draws, m))
    for j, (b, a) in enumerate(zip(bases.tolist(), digits, strict=True)):
        K = a.shape[0]
        L = np.tril(rng.integers(0, b, size=(draws, K, K)), -1)
        L[:, np.arange(K), np.arange(K)] = rng.integers(1, b, size=(draws, K))
        e = (L.reshape(draws * K, K).astype(np.float64) @ a).reshape(draws, K, m)
        e += rng.integers(0, b, size=(draws, K, 1))
        e -= b * np.floor(e / b)  # exact: e and e/b are small integers or far from one
        weights = float(b) ** -np.arange(1.0, K + 1.0)
        np.matmul(weights, e, out=out[j])
        out[j] += rng.random((draws, 1)) * float(b) ** -K  # the digits below K
    return np.moveaxis(out, 0, -1)
