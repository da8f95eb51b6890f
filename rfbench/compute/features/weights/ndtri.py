"""Φ⁻¹ in place over a large array: Cephes ``ndtri`` (Moshier, Cephes Math Library 2.1, 1989; its
coefficients, BSD licence as distributed with SciPy) as chunked numpy array operations
(docs/methods.md#qmc).

Central branch e⁻² < y ≤ 1 − e⁻²: bit-identical to scipy.special.ndtri; tail (r = √(−2 log v) < 8):
the same up to an ulp of numpy's SIMD log (≤ 1e-15 relative); r ≥ 8: scipy's ndtri itself."""

from __future__ import annotations

import numpy as np
from scipy import special

#: e⁻², the boundary of the central branch, and 1 − e⁻² as Cephes computes it
_E2 = 0.13533528323661269189
_HIGH = 1.0 - _E2
_SQRT_2PI = 2.50662827463100050242
#: Cephes ndtri: P0/Q0 on |y − ½| ≤ 3/8, P1/Q1 for 2 ≤ r < 8 (Q's leading 1 is implicit)
_P0 = (
    -5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
    1.39312609387279679503e1, -1.23916583867381258016e0,
)  # fmt: skip
_Q0 = (
    1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1,
    -2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1,
    1.59056225126211695515e1, -1.18331621121330003142e0,
)  # fmt: skip
_P1 = (
    4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
    4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
    -1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4,
)  # fmt: skip
_Q1 = (
    1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1,
    1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1,
    -3.80806407691578277194e-2, -9.33259480895457427372e-4,
)  # fmt: skip
#: elements per chunk of the central branch: it and three temporaries (1 MiB) stay in L2 cache
_CHUNK = 1 << 15
#: elements whose tails are gathered and evaluated together (fewer, longer array operations)
BLOCK = 1 << 17


def ndtri_inplace(y: np.ndarray) -> np.ndarray:
    """Φ⁻¹(y) elementwise, overwriting y (C-contiguous float64); returns y.

    Parameters
    ----------
    y : numpy.ndarray
        Probabilities in [0, 1]; 0 and 1 give ∓∞, values outside or NaN give NaN (no warning).

    Returns
    -------
    numpy.ndarray
        y itself, holding the standard normal quantiles.

    Notes
    -----
    Works through y in blocks of ``BLOCK`` elements; a caller that writes y block by block can
    apply it to each block while that is still in cache.
    """
    if y.dtype != np.float64 or not y.flags.c_contiguous or not y.flags.writeable:
        raise ValueError("ndtri_inplace needs a writeable C-contiguous float64 array")
    flat = y.reshape(-1)
    tmp = np.empty((3, min(_CHUNK, flat.size)))
    with np.errstate(divide="ignore", invalid="ignore"):
        for start in range(0, flat.size, BLOCK):
            block = flat[start : start + BLOCK]
            tail = np.flatnonzero((block <= _E2) | (block > _HIGH))
            v = block[tail]
            for at in range(0, block.size, _CHUNK):
                chunk = block[at : at + _CHUNK]
                _central(chunk, *tmp[:, : chunk.size])
            if tail.size:
                block[tail] = _tail(v)
    return y


def _polevl(x: np.ndarray, coef: tuple[float, ...], out: np.ndarray) -> np.ndarray:
    """Cephes polevl, c₀xⁿ + c₁xⁿ⁻¹ + … + cₙ by Horner's rule, into out."""
    np.multiply(x, coef[0], out=out)
    for c in coef[1:-1]:
        out += c
        out *= x
    out += coef[-1]
    return out


def _p1evl(x: np.ndarray, coef: tuple[float, ...], out: np.ndarray) -> np.ndarray:
    """Cephes p1evl, xⁿ + c₀xⁿ⁻¹ + … + cₙ₋₁ (the leading 1 implicit), into out."""
    np.add(x, coef[0], out=out)
    for c in coef[1:]:
        out *= x
        out += c
    return out


def _central(y: np.ndarray, u: np.ndarray, u2: np.ndarray, p: np.ndarray) -> None:
    """y ← √(2π)·(u + u·u²P0(u²)/Q0(u²)), u = y − ½ (every element; the tail is redone)."""
    np.subtract(y, 0.5, out=u)
    np.multiply(u, u, out=u2)
    _polevl(u2, _P0, p)
    p *= u2
    p /= _p1evl(u2, _Q0, y)
    p *= u
    p += u
    np.multiply(p, _SQRT_2PI, out=y)


def _tail(y: np.ndarray) -> np.ndarray:
    """Φ⁻¹(y) for y ≤ e⁻² or y > 1 − e⁻² (a new array)."""
    v = np.subtract(1.0, y)
    np.minimum(v, y, out=v)  # Cephes' y or 1 − y: whichever is ≤ e⁻²
    r = np.log(v)
    r *= -2.0
    np.sqrt(r, out=r)
    z = np.divide(1.0, r, out=v)
    x = np.log(r)
    x /= r
    np.subtract(r, x, out=x)  # r − log(r)/r
    p = _polevl(z, _P1, np.empty_like(z))
    p *= z
    p /= _p1evl(z, _Q1, r)
    x -= p
    np.copysign(x, np.subtract(y, 0.5, out=p), out=x)
    deep = np.flatnonzero(z <= 0.125)  # r ≥ 8 (1/r rounds to ⅛ only near it): scipy's branch
    if deep.size:
        x[deep] = special.ndtri(y[deep])
    return x
