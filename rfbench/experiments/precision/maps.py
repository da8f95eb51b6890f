"""Random-feature maps computed as practitioners do, in float64, float32, float16 or bfloat16.

Three forms of the same features φ (query) and ψ (key), for one draw of an rfbench estimator:

- ``naive``: every feature as written, ``f = c·exp(E)`` (e.g. exp(ωᵀx − ‖x‖²/2)/√M), in the dtype.
- ``stabilised``: FAVOR+'s shift as in performer implementations: ``c·(exp(E − max) + ε)``, the
  max taken over the features of each row for queries and over all rows and features for keys
  (one global shift), ε the implementations' stabiliser (added to positive maps only). In
  attention both shifts cancel in the row normalisation; for a kernel value they are undone in
  float64 after the product.
- ``logspace``: rfbench's own maps (``query_log_features``/``key_log_features``: exact float64
  log-space features with a per-row shift), whose bounded values are cast to the dtype at the end;
  the shift stays a float64 number. For attention, the keys' per-row shifts are first made
  relative to their maximum (in float64), so one global key shift remains and cancels.

Cast-at-each-step semantics of the naive and stabilised forms: the inputs X, the projections ω
and every constant (1/√M, ½, the DERF parameters A, B, C, log D) are cast to the dtype, and every
operation returns the dtype. What numpy actually computes (numpy 2, ml_dtypes ≥ 0.5; pinned
by ``tests/experiments/test_precision.py``): float16 and bfloat16 elementwise ufuncs (add,
multiply, exp, sin, …) compute in float32 and round each result to the dtype; ``matmul`` of
float16 or bfloat16 accumulates in float32 and rounds once (as GPU tensor cores do). ``np.sum``
of bfloat16, however, accumulates in bfloat16 (4096 ones sum to 256), so every sum here (‖x‖²,
row sums) is a matmul.
Feature maps follow the estimators: trig, positive, hyperbolic (HRF Eq. 2–3), the dense-exponential
family GERF/ADERF/SDERF/SADERF (DERF Thm 4.1, ``f = D exp(ωᵀAω + ωᵀBx + xᵀCx)``) and the angular
hybrid's explicit map (HRF Lemma 2.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from rfbench.features.base import Draw, Estimator, Projections, Side
from rfbench.features.estimator import ComponentEstimator
from rfbench.features.hybrid import AngularHybrid

#: dtype name -> numpy scalar type (bfloat16 from ml_dtypes)
DTYPES: dict[str, Any] = {
    "float64": np.float64,
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
}
FORMS: tuple[str, ...] = ("naive", "stabilised", "logspace")
#: components with a dtype recipe here (DERF variants share one)
SIMPLE = ("trig", "positive", "hyperbolic")
DERF = ("gerf", "aderf", "sderf", "saderf")


def largest(dtype: str) -> float:
    """The largest finite value of a dtype (65504 for float16)."""
    return float(ml_dtypes.finfo(DTYPES[dtype]).max)


@dataclass(frozen=True)
class Parts:
    """A feature map as ``factor · exp(exponent)``, both (draws, N, F) in the dtype.

    ``factor`` carries constants, signs and sin/cos; ``positive`` says every factor is ≥ 0.
    """

    exponent: np.ndarray
    factor: np.ndarray
    positive: bool


def supported(est: Estimator) -> bool:
    """Whether a dtype recipe exists for ``est`` (Monte Carlo weights only)."""
    if isinstance(est, AngularHybrid):
        return True
    return isinstance(est, ComponentEstimator) and est.component.name in SIMPLE + DERF


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b in the dtype: float32 accumulation and one rounding for the 16-bit types, as numpy's
    own half loops do, but through the float32 BLAS (the order of the float32 sums differs)."""
    dt = np.result_type(a, b)
    if dt.itemsize >= 4:
        return np.matmul(a, b)
    return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(dt)


def _half_sq(X: np.ndarray) -> np.ndarray:
    """½‖x‖² per row in X's dtype, the sum as a matmul (float32 accumulation)."""
    ones = np.ones((X.shape[-1], 1), X.dtype)
    return _mm(X * X, ones)[..., 0] * X.dtype.type(0.5)


def _rounded(proj: Projections, dt: Any, memo: dict) -> np.ndarray:
    """ω rounded to the dtype (held as float32 for the 16-bit types, ready for ``_mm``); the
    query and key sides of one draw share it through ``memo``."""
    key = (id(proj), "W")
    if key not in memo:
        if proj.weights is not None:
            raise ValueError("dtype maps support Monte Carlo couplings (no quadrature weights)")
        W = proj.W.astype(dt)
        memo[key] = W if W.dtype.itemsize >= 4 else W.astype(np.float32)
    return memo[key]


def _project(proj: Projections, X: np.ndarray, dt: Any, memo: dict) -> np.ndarray:
    """ωᵀx in the dtype: (draws, N, M)."""
    W = _rounded(proj, dt, memo)
    Xt = np.swapaxes(X[..., : proj.frame], -1, -2).astype(W.dtype)
    return np.swapaxes(np.matmul(W, Xt), -1, -2).astype(dt)


def _simple(name: str, proj: Projections, X: np.ndarray, dt: Any, memo: dict) -> Parts:
    """trig / positive / hyperbolic exponents and factors (HRF Eq. 2–3)."""
    u, h = _project(proj, X, dt, memo), _half_sq(X)[..., None]
    m = proj.count
    if name == "positive":
        c = dt(1.0 / np.sqrt(m))
        return Parts(u - h, np.full(u.shape, c, dt), True)
    if name == "hyperbolic":
        c = dt(1.0 / np.sqrt(2 * m))
        e = np.concatenate([u - h, -u - h], axis=-1)
        return Parts(e, np.full(e.shape, c, dt), True)
    c = dt(1.0 / np.sqrt(m))
    factor = np.concatenate([np.sin(u) * c, np.cos(u) * c], axis=-1)
    return Parts(np.broadcast_to(h, factor.shape).astype(dt), factor, False)


def _derf(draw: Draw, X: np.ndarray, side: Side, dt: Any, memo: dict) -> Parts:
    """D exp(ωᵀAω + ωᵀBx + xᵀCx)/√M with the fitted DERF parameters cast to the dtype."""
    derf = draw.params["derf"]
    proj = draw.projections["omega"]
    B, C = derf.side(side)
    u = _project(proj, _mm(X, B.T.astype(dt)), dt, memo)
    ones = np.ones((proj.frame, 1), dt)
    if (id(proj), "quad") not in memo:  # ωᵀAω (A diagonal), shared by both sides
        W = proj.W.astype(dt)
        memo[(id(proj), "quad")] = _mm(W * W * derf.a.astype(dt), ones)[..., 0]
    quad = memo[(id(proj), "quad")]
    xcx = _mm((_mm(X, C.astype(dt)) * X), ones)[..., 0]
    row = xcx + dt(derf.log_D)
    e = u + quad[:, None, :] + row[..., None]
    return Parts(e, np.full(e.shape, dt(1.0 / np.sqrt(proj.count)), dt), True)


def _hybrid(
    est: AngularHybrid, draw: Draw, X: np.ndarray, side: Side, dt: Any, memo: dict
) -> Parts:
    """HRF Lemma 2.3: [√a φ⁺⁺; √|c| g⊗φ⁺⁺; √|1−a| φᵗʳⁱᵍ; √|c| g⊗φᵗʳⁱᵍ]; the key side carries
    the signs of (a, c, 1−a, −c)."""
    a, c = est.coefficients()
    pos = _simple("hyperbolic", draw.projections["omega_pos"], X, dt, memo)
    trig = _simple("trig", draw.projections["omega_trig"], X, dt, memo)
    tau = draw.projections["tau"]
    g = np.where(_project(tau, X, dt, memo) >= 0, dt(1.0), dt(-1.0)) * dt(1.0 / np.sqrt(tau.count))
    exps, factors = [], []
    for base, coefs in ((pos, (a, c)), (trig, (1.0 - a, -c))):
        for k, outer in zip(coefs, (False, True), strict=True):
            if k == 0:
                continue
            s = dt(np.sqrt(abs(k)) * (np.sign(k) if side == "key" else 1.0))
            e, f = base.exponent, base.factor * s
            if outer:
                e = np.broadcast_to(e[..., None, :], (*g.shape, e.shape[-1]))
                f = g[..., :, None] * f[..., None, :]
            exps.append(e.reshape(*e.shape[:2], -1))
            factors.append(f.reshape(*f.shape[:2], -1))
    return Parts(np.concatenate(exps, -1), np.concatenate(factors, -1), False)


def parts(
    est: Estimator, draw: Draw, X: np.ndarray, side: Side, dtype: str, memo: dict | None = None
) -> Parts:
    """The map of ``est`` (one ``draw``) at inputs X (N, d), every step in ``dtype``.

    ``memo`` (one dict per draw and dtype) shares the rounded ω between the two sides."""
    dt, memo = DTYPES[dtype], {} if memo is None else memo
    Xd = np.asarray(X, dtype=float).astype(dt)
    if isinstance(est, AngularHybrid):
        return _hybrid(est, draw, Xd, side, dt, memo)
    if isinstance(est, ComponentEstimator):
        name = est.component.name
        if name in SIMPLE:
            return _simple(name, draw.projections["omega"], Xd, dt, memo)
        if name in DERF:
            return _derf(draw, Xd, side, dt, memo)
    raise ValueError(f"no dtype feature map for estimator {est.name!r}")


def dense(p: Parts, form: str, side: Side, eps: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(features in the dtype (draws, N, F), float64 log-shift per row (draws, N)).

    ``naive``: factor·exp(E). ``stabilised``: factor·(exp(E − max) + ε), max per row (query) or
    global per draw (key), ε only for positive maps. Overflow and NaN propagate, as they would.
    """
    dt = p.exponent.dtype.type
    draws, n = p.exponent.shape[:2]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if form == "naive":
            return p.factor * np.exp(p.exponent), np.zeros((draws, n))
        if form != "stabilised":
            raise ValueError(f"form must be one of {', '.join(FORMS[:2])}, got {form!r}")
        axes = -1 if side == "query" else (-2, -1)
        top = np.max(p.exponent, axis=axes, keepdims=True)
        core = np.exp(p.exponent - top)
        if p.positive and eps:
            core = core + dt(eps)
        shift = np.broadcast_to(top.astype(float)[..., 0], (draws, n))
        return p.factor * core, shift


def logspace(
    est: Estimator, draw: Draw, X: np.ndarray, side: Side, dtype: str, global_key: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """rfbench's float64 log-space map with its bounded values cast to ``dtype``; the shift stays
    float64. ``global_key``: key shifts made relative to their maximum first (for attention)."""
    f = est.query_log_features(draw, X) if side == "query" else est.key_log_features(draw, X)
    values, shift = f.values, f.log_scale
    if np.iscomplexobj(values):
        raise ValueError(f"{est.name}: complex features have no real dtype map")
    if side == "key" and global_key:
        top = np.max(shift, axis=-1, keepdims=True)
        values = values * np.exp(shift - top)[..., None]
        shift = np.broadcast_to(top, shift.shape)
    return values.astype(DTYPES[dtype]), shift


def pair_forms(
    est: Estimator,
    draw: Draw,
    X: np.ndarray,
    Y: np.ndarray,
    dtype: str,
    forms: Sequence[str] = FORMS,
    eps: float = 0.0,
    global_key: bool = False,
) -> tuple[dict[str, tuple], dict[str, tuple]]:
    """Queries X and keys Y: per form, (features in ``dtype``, float64 shift per row).

    See the module docstring; the dtype exponents serve both the naive and stabilised forms."""
    memo: dict = {}
    out: tuple[dict[str, tuple], dict[str, tuple]] = ({}, {})
    for side, Z, forms_out in (("query", X, out[0]), ("key", Y, out[1])):
        dense_forms = [f for f in forms if f != "logspace"]
        p = parts(est, draw, Z, side, dtype, memo) if dense_forms else None
        for form in forms:
            if form == "logspace":
                forms_out[form] = logspace(est, draw, Z, side, dtype, global_key)
            else:
                forms_out[form] = dense(p, form, side, eps)
    return out


def kernel_estimate(query: tuple, key: tuple) -> np.ndarray:
    """K̂ = (φ·ψ in the dtype) · exp(shift_x + shift_y) (float64): (draws, N, N')."""
    (vq, sq), (vk, sk) = query, key
    with np.errstate(over="ignore", invalid="ignore"):
        gram = _mm(vq, np.swapaxes(vk, -1, -2)).astype(float)
        return gram * np.exp(sq[..., :, None] + sk[..., None, :])


def attention_weights(query: tuple, key: tuple) -> np.ndarray:
    """Row-normalised D̂⁻¹Â in the dtype (shifts cancel), returned as float64: (draws, L, L')."""
    vq, vk = query[0], key[0]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a = _mm(vq, np.swapaxes(vk, -1, -2))
        rows = _mm(a, np.ones((a.shape[-1], 1), a.dtype))
        return (a / rows).astype(float)
