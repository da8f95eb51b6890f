"""Feature maps held in log space, ``exp(log_scale[row]) * values[row]`` with each row shifted by
its largest log-magnitude (no epsilon, no clipping), and the estimates they give
(docs/architecture.md#estimator-contract).

The dtype steps of reduced-precision feature maps ``factor · exp(exponent)`` (:class:`Parts`;
the capability ``Estimator.dtype_parts``, docs/extending.md#capabilities; HRF Eq. 2–3,
DERF Thm 4.1) are here too. Every step returns the dtype ``dt`` (np.float64, np.float32,
np.float16 or ml_dtypes.bfloat16); 16-bit sums go through :func:`mm` (float32 accumulation, one
rounding), because ``np.sum`` of bfloat16 accumulates in bfloat16. ``memo`` is one dict per draw
and dtype, through which the query and key sides share the rounded ω.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rfbench.compute.kernels import sq_norms

if TYPE_CHECKING:
    from rfbench.compute.features.projections import Projections

Side = Literal["query", "key"]


class EstimateRangeError(ArithmeticError):
    """An estimate is not representable in float64 (it is reported, never clipped)."""


@dataclass(frozen=True)
class Features:
    """A batch of feature maps in log space: features = exp(log_scale)[..., None] * values.

    values:    (draws, N, F) real or complex, each row shifted so its largest magnitude is ≤ 1.
    log_scale: (draws, N) real.
    """

    values: np.ndarray
    log_scale: np.ndarray

    def dense(self) -> np.ndarray:
        """The features themselves, (draws, N, F) (may overflow where the kernel does)."""
        with np.errstate(over="ignore"):
            return self.values * np.exp(self.log_scale)[..., None]


@dataclass(frozen=True)
class Parts:
    """A feature map in a reduced-precision dtype as ``factor · exp(exponent)``, both (draws, N, F)
    in the dtype (the dtype steps: :func:`half_sq`, :func:`project`, :func:`mm`); ``factor``
    carries constants, signs and sin/cos, ``positive`` says every factor is ≥ 0."""

    exponent: np.ndarray
    factor: np.ndarray
    positive: bool


def concat_features(blocks: Sequence[Features]) -> Features:
    """Concatenate maps of the same rows along the feature axis, exactly (log scales aligned).

    A block whose row scale is -inf (an all-zero row) contributes zeros.
    """
    top = np.max(np.stack([f.log_scale for f in blocks]), axis=0)
    top = np.where(np.isfinite(top), top, 0.0)
    parts = [f.values * np.exp(f.log_scale - top)[..., None] for f in blocks]
    return Features(np.concatenate(parts, axis=-1), top)


def shifted_exp(log_magnitude: np.ndarray, factor: np.ndarray | None = None) -> Features:
    """Features factor·exp(log_magnitude) over axes (draws, N, M, l), shifted per row.

    ``factor`` (broadcastable, real or complex, |factor| ≤ 1) carries signs and phases. Values are
    flattened to (draws, N, M*l); a row whose features are all zero gets log scale 0.
    """
    draws, n = log_magnitude.shape[:2]
    top = np.max(log_magnitude.reshape(draws, n, -1), axis=-1)
    top = np.where(np.isfinite(top), top, 0.0)
    values = log_magnitude - top[:, :, None, None]
    np.exp(values, out=values)
    if factor is not None:
        shape = np.broadcast_shapes(values.shape, np.shape(factor))
        if np.result_type(values, factor) == values.dtype and shape == values.shape:
            np.multiply(values, factor, out=values)  # a real factor: in place
        else:
            values = values * factor
    return Features(values.reshape(draws, n, -1), top)


def real_product(phi: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """Re(Φ Ψᵀ) over the last two axes; for complex maps as one real product
    [Re Φ, Im Φ][Re Ψ, −Im Ψ]ᵀ (half the flops of the complex product)."""
    if not (np.iscomplexobj(phi) or np.iscomplexobj(psi)):
        return phi @ np.swapaxes(psi, -1, -2)
    a = np.concatenate([phi.real, phi.imag], axis=-1)
    b = np.concatenate([psi.real, -psi.imag], axis=-1)
    return a @ np.swapaxes(b, -1, -2)


def bilinear_estimate(query: Features, key: Features) -> np.ndarray:
    """K̂ = Re(φ(x)ᵀψ(y)) (bilinear, no conjugation) for every draw and pair: (draws, N, N')."""
    gram = real_product(query.values, key.values)
    return scaled_estimate(gram, query.log_scale, key.log_scale, fresh=True)


#: row scales below this in magnitude are exponentiated separately (no overflow possible)
SAFE_LOG = 300.0


def scaled_estimate(
    gram: np.ndarray, row_log: np.ndarray, col_log: np.ndarray, fresh: bool = False
) -> np.ndarray:
    """gram·exp(row_log[i] + col_log[j]), or EstimateRangeError if an estimate is not
    representable. Moderate scales (the usual case) multiply by e^row and e^col in turn: two
    passes over the pairs instead of an exponential of each. ``fresh``: ``gram`` is the caller's
    to overwrite (the same products, written into it where its dtype and shape hold them)."""
    with np.errstate(over="ignore", invalid="ignore"):
        safe = all(np.max(np.abs(a), initial=0.0) < SAFE_LOG for a in (row_log, col_log))
        if safe:
            rows = np.exp(row_log)[..., :, None]
            fits = np.result_type(gram, rows) == gram.dtype
            if fresh and fits and np.broadcast_shapes(gram.shape, rows.shape) == gram.shape:
                out = np.multiply(gram, rows, out=gram)
            else:
                out = gram * rows
            out *= np.exp(col_log)[..., None, :]
        else:
            out = gram * np.exp(row_log[..., :, None] + col_log[..., None, :])
        finite = bool(np.isfinite(np.sum(out))) or bool(np.all(np.isfinite(out)))
    if not finite:
        bad = int(np.size(out) - np.count_nonzero(np.isfinite(out)))
        top = np.max(row_log[..., :, None] + col_log[..., None, :])
        raise EstimateRangeError(
            f"{bad} estimate(s) overflow float64 (largest log-scale {top:.1f}); "
            "the kernel value itself is out of range — rescale the inputs"
        )
    return out


def kernel_row_log(alpha: float, X: np.ndarray) -> np.ndarray:
    """α‖x‖² per row: turns softmax features into K^(α) features (DERF Sec. 2)."""
    return alpha * sq_norms(np.asarray(X, dtype=float))


def mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b (batched as ``np.matmul``) in the operands' dtype: float32 accumulation and one
    rounding for the 16-bit types, as numpy's own half loops do, but through the float32 BLAS."""
    dt = np.result_type(a, b)
    if dt.itemsize >= 4:
        return np.matmul(a, b)
    return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(dt)


def half_sq(X: np.ndarray) -> np.ndarray:
    """½‖x‖² per row of X (..., N, d) -> (..., N) in X's dtype, the sum as a matmul (HRF Eq. 2–3's
    row term)."""
    ones = np.ones((X.shape[-1], 1), X.dtype)
    return mm(X * X, ones)[..., 0] * X.dtype.type(0.5)


def rounded(proj: Projections, dt: Any, memo: dict) -> np.ndarray:
    """ω of Monte Carlo projections (no quadrature weights) rounded to ``dt``, (draws, M, k), held
    as float32 for the 16-bit types (ready for :func:`mm`), shared through ``memo``."""
    key = (id(proj), "W")
    if key not in memo:
        if proj.weights is not None:
            raise ValueError("dtype maps support Monte Carlo couplings (no quadrature weights)")
        W = proj.W.astype(dt)
        memo[key] = W if W.dtype.itemsize >= 4 else W.astype(np.float32)
    return memo[key]


def project(proj: Projections, X: np.ndarray, dt: Any, memo: dict) -> np.ndarray:
    """ωᵀx in the dtype, (draws, N, M), for inputs X (N, d) or (draws, N, d) in the dtype and ω
    rounded once per draw (:func:`rounded`)."""
    W = rounded(proj, dt, memo)
    Xt = np.swapaxes(X[..., : proj.frame], -1, -2).astype(W.dtype)
    return np.swapaxes(np.matmul(W, Xt), -1, -2).astype(dt)
