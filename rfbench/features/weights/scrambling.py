"""Randomised Sobol' and Halton point sets for many draws at once (random linear scrambling).

The unscrambled points come from ``scipy.stats.qmc`` once per (d, m) (cached); each draw then
applies its own random linear scrambling plus a random digital shift (Matoušek 1998; Owen 2003,
"Variance with alternative scramblings"): for coordinate j in base b, the digits
a = (a_0, …, a_{K−1}) of a point (K = the digits that vary over m points) become

    e = L a + s  (mod b),   L lower triangular, diagonal in {1..b−1}, the rest and s uniform,

and the digits below position K are filled with an independent uniform per (draw, coordinate).
L is invertible, so a (t, m, d)-net stays a net and Halton strata stay strata; s is uniform, so
every point is exactly uniform on [0, 1)^d (to the 2^-52 grid) and Φ⁻¹ of it is exactly N(0, I).
This is scipy's own scramble for Sobol' (LMS + digital shift), and the linear member of the
random-permutation family scipy uses for Halton. All draws are done by array operations over
(draws, m, d): no engine per draw.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
from scipy.stats import qmc

#: bits of a randomised point (the float64 mantissa); points are (k + ½)·2^-52
_BITS = 52
#: the exponent bits of 1.0: (x | _ONE) viewed as float64 is 1 + x/2^52
_ONE = np.uint64(0x3FF0000000000000)


def _digits_needed(base: int, m: int) -> int:
    """The number of base-b digits of the indices 0..m−1 (at least one)."""
    k, span = 1, base
    while span < m:
        k, span = k + 1, span * base
    return k


@lru_cache(maxsize=32)
def sobol_codes(d: int, m: int) -> tuple[int, np.ndarray]:
    """(K, codes): the first m unscrambled Sobol' points as K-bit integers a_ij, (m, d) read-only,
    stored as j·2^K + a_ij (the point's entry in a per-coordinate table of 2^K values).

    K = ⌈log2 m⌉ bits hold every point exactly (the generator matrices are upper triangular);
    m a power of two gives a full (t, K, d)-net.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The balance properties", UserWarning)
        t = qmc.Sobol(d, scramble=False).random(m)
    K = _digits_needed(2, m)
    codes = np.rint(np.ldexp(t, K)).astype(np.intp) + (np.arange(d) << K)
    codes.setflags(write=False)
    return K, codes


def _random_bits(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(0, 1 << _BITS, size=shape, dtype=np.uint64)


def sobol_points(rng: np.random.Generator, d: int, m: int, draws: int) -> np.ndarray:
    """(draws, m, d) Sobol' points, each draw with its own LMS + digital shift (52 bits).

    Column l of a draw's lower-triangular L is a 52-bit integer (bit l set, random bits below);
    a point's scrambled value is s XOR the columns of its set bits. As L is linear, the values
    of all 2^K integers of a coordinate are tabulated by doubling (T[a + 2^p] = T[a] ^ column),
    then looked up; the 52-bit x becomes (x + ½)·2^-52 exactly through the float64 mantissa.
    """
    K, codes = sobol_codes(d, m)
    T = np.empty((draws, d, 1 << K), dtype=np.uint64)
    # the digital shift, with the exponent bits of 1.0 set once here: the columns XORed in below
    # touch only the 52 mantissa bits, so every entry already reads as the float 1 + x/2^52
    T[..., 0] = _random_bits(rng, (draws, d)) | _ONE
    for p in range(K):  # integer bit p is digit l = K − 1 − p (l = 0: the ½ digit)
        top = np.uint64(1 << (_BITS - K + p))
        col = (_random_bits(rng, (draws, d, 1)) & (top - np.uint64(1))) | top
        np.bitwise_xor(T[..., : 1 << p], col, out=T[..., 1 << p : 2 << p])
    x = np.take(T.reshape(draws, -1), codes, axis=1)
    t = x.view(np.float64)
    t -= 1.0 - 2.0**-53  # exact (Sterbenz): 1 + x/2^52 − 1 + 2^-53
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
