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
float16 or bfloat16 accumulates in float32 and rounds once (as GPU tensor cores do). ``np.sum`` of
bfloat16, however, accumulates in bfloat16 (4096 ones sum to 256), so every sum (‖x‖², row sums)
is a matmul (:func:`rfbench.compute.features.maps.mm`).

The dtype map of an estimator is its own: every estimator that declares the capability
``Estimator.dtype_parts`` (``Estimator.precision_form``; the recipes and the dtype
steps are in :mod:`rfbench.compute.features.maps` and the estimators, e.g. HRF Eq. 2–3, DERF
Thm 4.1, HRF Lemma 2.3) writes its features as ``factor · exp(exponent)`` in the dtype; the
experiment gives an estimator without it one ``skipped`` row saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from rfbench.compute.features.base import Draw, Estimator, Parts, Side
from rfbench.compute.features.maps import mm

#: dtype name -> numpy scalar type (bfloat16 from ml_dtypes)
DTYPES: dict[str, Any] = {
    "float64": np.float64,
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
}
FORMS: tuple[str, ...] = ("naive", "stabilised", "logspace")


def parts(
    est: Estimator, draw: Draw, X: np.ndarray, side: Side, dtype: str, memo: dict | None = None
) -> Parts:
    """The map of ``est`` (one ``draw``) at inputs X (N, d), every step in ``dtype``: the
    estimator's own reduced-precision form (``Estimator.dtype_parts``).

    ``memo`` (one dict per draw and dtype) shares the rounded ω between the two sides."""
    dt, memo = DTYPES[dtype], {} if memo is None else memo
    Xd = np.asarray(X, dtype=float).astype(dt)
    return est.dtype_parts(draw, Xd, side, dt, memo)


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
        gram = mm(vq, np.swapaxes(vk, -1, -2)).astype(float)
        return gram * np.exp(sq[..., :, None] + sk[..., None, :])


def attention_weights(query: tuple, key: tuple) -> np.ndarray:
    """Row-normalised D̂⁻¹Â in the dtype (shifts cancel), returned as float64: (draws, L, L')."""
    vq, vk = query[0], key[0]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a = mm(vq, np.swapaxes(vk, -1, -2))
        rows = mm(a, np.ones((a.shape[-1], 1), a.dtype))
        return (a / rows).astype(float)
