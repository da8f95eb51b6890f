"""Closed-form MSE of PNC random features (VRC, Reid et al., ICLR 2025; docs/methods.md#pnc
[derived]): MSE_ORF plus (2P/m²)·pre·(E_NM − E_ind)[f(w_a² + w_b²)], the countermonotone moment by
Gauss–Legendre quadrature in the larger norm; checked by Monte Carlo in tests/features/test_pnc.py.

:func:`coupled_pair_moment` evaluates each distinct argument once and memoises per process (the
values of a fresh evaluation, bit for bit)."""

from __future__ import annotations

from collections import OrderedDict
from functools import cache

import numpy as np
from scipy.special import gammaln, hyp0f1, hyp1f1, ive, roots_legendre
from scipy.stats import chi

from rfbench.compute.features.base import Estimator
from rfbench.compute.features.theory.coupled import COMPONENTS, _log_1f1
from rfbench.compute.features.theory.coupled import mse as coupled_mse
from rfbench.compute.features.theory.registry import register_theory
from rfbench.compute.kernels import kernel_alpha, sq_norms

_NODES = 100  # Gauss–Legendre nodes: within 1e-10 of 400 nodes for d ≥ 2, v ≤ 25 (checked)
_TAIL = 14.0  # integrate w_b up to √d + v + _TAIL: the χ_d density is below e^{-98} beyond
#: bytes of moments kept by the memo of :func:`coupled_pair_moment` (least recently used dropped)
MEMO_BYTES = 64 << 20
_memo: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()


def _pnc_pairs(m: int, d: int) -> int:
    """Coupled pairs P = n⌊d/2⌋ + ⌊r/2⌋ of m = n d + r rows in stacked blocks of d (the truncated
    last block keeps ⌊r/2⌋ pairs)."""
    n, r = divmod(int(m), int(d))
    return n * (d // 2) + r // 2


@cache
def _pair_rule(d: int, upper: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes s = w_a² + w_b² and weights q (Σ q = 1) of E_NM[f(s)] = 2∫_{med}^{upper} f p(w_b)."""
    med = float(chi.median(d))
    t, w = roots_legendre(_NODES)
    wb = med + (upper - med) * (t + 1) / 2
    wa = chi.ppf(chi.sf(wb, d), d)
    q = 2 * w * (upper - med) / 2 * chi.pdf(wb, d)
    return wa**2 + wb**2, q / q.sum()


def _log_psi(d: int, r: np.ndarray) -> np.ndarray:
    """log Ψ_d(r) = log 0F1(; d/2; r²/4) = log[Γ(d/2)(2/r)^{d/2−1} I_{d/2−1}(r)], r ≥ 0."""
    r = np.asarray(r, dtype=float)
    small = r < 1.0
    rs = np.where(small, 1.0, r)
    nu = d / 2 - 1
    big = gammaln(d / 2) + nu * np.log(2 / rs) + np.log(ive(nu, rs)) + rs
    return np.where(small, np.log(hyp0f1(d / 2, np.where(small, r, 0.0) ** 2 / 4)), big)


def _pair_moment(component: str, d: int, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The computation behind :func:`coupled_pair_moment` (same parameters and returns)."""
    a = np.asarray(a, dtype=float)
    if component == "trig":
        s, q = _pair_rule(d, float(np.sqrt(d) + _TAIL))
        r2 = a[..., None] ** 2 * s
        nm = np.sum(hyp0f1(d / 2, -r2 / 4) * q, axis=-1)  # per value: independent of the others
        return nm, hyp1f1(d, d / 2, -(a**2) / 2)
    upper = float(np.sqrt(d) + np.max(a, initial=0.0) + _TAIL)
    s, q = _pair_rule(d, upper)
    log_f = _log_psi(d, a[..., None] * np.sqrt(s)) + np.log(q)
    top = np.max(log_f, axis=-1, keepdims=True)
    log_nm = top[..., 0] + np.log(np.sum(np.exp(log_f - top), axis=-1))
    return log_nm, _log_1f1(d, a**2 / 2)


def coupled_pair_moment(component: str, d: int, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E_NM and E_ind of f(w_a² + w_b²) for a countermonotone and an independent χ_d pair,
    memoised (module doc; a repeated call returns the first call's read-only arrays).

    Parameters
    ----------
    component : {"trig", "positive", "hyperbolic"}
        Feature map; selects f (module doc).
    d : int
        Input dimension.
    a : ndarray, any shape
        z = ‖x − y‖ (trig) or v = ‖x + y‖ (positive, hyperbolic).

    Returns
    -------
    tuple of two ndarrays, the shape of ``a``
        For trig: E_NM[Ω_d(z√s)] and E_ind = 1F1(d; d/2; −z²/2) (plain values). For the others:
        their logarithms (Ψ grows like e^{v√s}).
    """
    a = np.asarray(a, dtype=float)
    key = (component == "trig", int(d), a.shape, a.tobytes())  # tobytes: C order, any strides
    if key in _memo:
        _memo.move_to_end(key)
        return _memo[key]
    values, where = np.unique(a, return_inverse=True)  # a Gram matrix's a is symmetric
    found = tuple(m[where].reshape(a.shape) for m in _pair_moment(component, d, values))
    for array in found:
        array.setflags(write=False)
    _memo[key] = found
    while sum(2 * len(k[3]) for k in _memo) > MEMO_BYTES:  # each entry: 2 arrays the size of a
        _memo.popitem(last=False)
    return found


def mse(
    component: str, x: np.ndarray, y: np.ndarray, m: int, *, kernel: str | float = "gaussian"
) -> np.ndarray:
    """MSE of ``component@pnc`` with m projections at x, y (module doc).

    Parameters
    ----------
    component : {"trig", "positive", "hyperbolic"}
        Feature map.
    x, y : ndarray, shape (..., d)
        Input pairs (broadcast against each other).
    m : int
        Number of projections (stacked independent blocks of d when m > d).
    kernel : str or float
        "gaussian", "softmax" or α of K^(α).

    Returns
    -------
    ndarray, shape (...)
        The mean squared error of the estimate of K(x, y).
    """
    if component not in COMPONENTS:
        raise ValueError(f"no PNC theory for component {component!r}; allowed: {COMPONENTS}")
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    d = x.shape[-1]
    norms = sq_norms(x) + sq_norms(y)
    base = coupled_mse(component, "orf", x, y, m, kernel=kernel)
    weight = 2.0 * _pnc_pairs(m, d) / m**2
    log_alpha = 2 * kernel_alpha(kernel) * norms
    if component == "trig":
        nm, ind = coupled_pair_moment("trig", d, np.sqrt(sq_norms(x - y)))
        return base + weight * np.exp(norms + log_alpha) * (nm - ind)
    log_nm, log_ind = coupled_pair_moment(component, d, np.sqrt(sq_norms(x + y)))
    log_pre = log_alpha - norms + log_ind
    with np.errstate(over="ignore"):
        return base + weight * np.exp(log_pre) * np.expm1(log_nm - log_ind)


def variance_ratio(component: str, d: int, m: int, a: float) -> float:
    """Var_PNC / Var_ORF for the Gaussian kernel at one pair of points.

    Parameters
    ----------
    component : {"trig", "positive", "hyperbolic"}
        Feature map.
    d, m : int
        Input dimension and number of projections.
    a : float
        z = ‖x − y‖ for trig (x = 0, y = a e_1); v = ‖x + y‖ otherwise (x = y = (a/2) e_1).

    Returns
    -------
    float
        The ratio of the two MSEs (< 1: PNC wins).
    """
    x = np.zeros(d)
    y = np.zeros(d)
    if component == "trig":
        y[0] = a
    else:
        x[0] = y[0] = a / 2
    pnc = mse(component, x, y, m, kernel="gaussian")
    orf = coupled_mse(component, "orf", x, y, m, kernel="gaussian")
    return float(pnc / orf)


def _registered(component: str):
    def formula(est: Estimator, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if getattr(est.weights, "rho", -1.0) != -1.0:
            raise NotImplementedError("PNC closed form: exact countermonotone pairs (rho = -1)")
        return mse(component, x, y, est.m, kernel="softmax")

    formula.__doc__ = f"Softmax-kernel MSE of {component}@pnc (docs/methods.md#pnc)."
    return formula


for _component in COMPONENTS:
    register_theory(f"{_component}@pnc")(_registered(_component))
