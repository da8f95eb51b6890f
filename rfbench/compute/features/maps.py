"""Feature maps held in log space, ``exp(log_scale[row]) * values[row]`` with each row shifted by
its largest log-magnitude (no epsilon, no clipping), and the estimates they give
(docs/architecture.md#estimator-contract)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rfbench.compute.kernels import sq_norms

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
    in the dtype (:mod:`rfbench.compute.features.dtype_maps`); ``factor`` carries constants, signs
    and sin/cos, ``positive`` says every factor is ≥ 0."""

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
    return scaled_estimate(real_product(query.values, key.values), query.log_scale, key.log_scale)


#: row scales below this in magnitude are exponentiated separately (no overflow possible)
_SAFE_LOG = 300.0


def scaled_estimate(gram: np.ndarray, row_log: np.ndarray, col_log: np.ndarray) -> np.ndarray:
    """gram·exp(row_log[i] + col_log[j]), or EstimateRangeError if an estimate is not
    representable. Moderate scales (the usual case) multiply by e^row and e^col in turn: two
    passes over the pairs instead of an exponential of each."""
    with np.errstate(over="ignore", invalid="ignore"):
        safe = all(np.max(np.abs(a), initial=0.0) < _SAFE_LOG for a in (row_log, col_log))
        if safe:
            out = gram * np.exp(row_log)[..., :, None]
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
