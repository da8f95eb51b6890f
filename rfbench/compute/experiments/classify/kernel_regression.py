"""Kernel-regression classification with random features (SimRF §5.3; DERF §5.2, App. B.3).

The classifier scores a query x* by the unnormalised Nadaraya–Watson numerator
r̂(x*) = Σ_i K̂(x*, x_i) y_i = φ(x*)ᵀ(Ψᵀ Y), Y the one-hot training labels, and predicts its argmax
(the positive denominator does not change the argmax; for sign-indefinite trig features the
unnormalised form must be kept, DERF Sec. 5.2, Fig. 3; docs/experiments.md#derf-fig3; the SimRF code
does the same, docs/experiments.md#simrf-fig8).

Batched over trials: a batch of draws is merged into one set of draws·M projections (features
are per projection, so this is exact); the training side is streamed over row chunks and reduced
to Ψᵀ Y per feature column in the log domain — each column keeps its own exact shift c_f, so no
row is lost to underflow whatever the scale (σ = 100 in DERF Fig. 3) — and each query's scores
are shifted per draw. Positive per-query factors (the query's row term, the Monte Carlo 1/M) do
not change the argmax and are dropped; per-row training terms (α‖x‖² and the component's own,
e.g. -‖x‖²/2) are summed in float64 and shifted by their maximum.

Precision: ``dtype=float32`` computes projections, exponentials and products in float32 (3× faster)
while every log-magnitude and summed row term stays within ±``FLOAT32_MAX_LOG`` (exponents then
carry an absolute error ≲ 1e-4, far below any Monte Carlo effect; a bounded feature's cosine of
|ωᵀx| ≤ ``FLOAT32_MAX_ARG`` carries ≤ 6e-4); ``"auto"`` falls back to float64 for an
evaluation that leaves that range.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from rfbench.compute.features.base import Estimator, Projections
from rfbench.compute.kernels import log_kernel, sq_norms

#: elements of one chunk of features (4 MB of float32): cache-sized row blocks
CHUNK = 1 << 20
#: most feature columns (draws × features per draw) processed at once
MAX_COLUMNS = 4096
#: float32 is used only while |log-magnitudes| and |row terms| stay below this
FLOAT32_MAX_LOG = 1024.0
#: ... and a bounded (trig) feature's argument |ωᵀx| ≤ ‖ω‖‖x‖ below this: its float32 rounding,
#: |ωᵀx|·2⁻²⁴ ≤ 6e-4, then moves cos(ωᵀx) by far less than its Monte Carlo spread
FLOAT32_MAX_ARG = 1e4
#: exponents are raised to at least this before exp: e^-87 is float32's smallest normal number,
#: e^-700 is just above float64's (numpy's exp takes a slow path from -708 on, 7-40× slower, and
#: denormals slow the BLAS); a term this small relative to its column's largest (1) changes a sum
#: of N <= 10^6 terms by < 10^-31 (float32) or 10^-298 (float64), far below either's resolution
EXP_FLOOR = {np.dtype(np.float32): -87.0, np.dtype(np.float64): -700.0}


class Float32Unsafe(ArithmeticError):
    """Exponents left the range where float32 keeps them accurate (use float64)."""


def _rows(n_columns: int) -> int:
    return max(64, CHUNK // max(1, n_columns))


def merge_draws(proj: Projections, dtype: Any = np.float64) -> Projections:
    """The draws·M projections of ``proj`` as one draw, in ``dtype`` (weights tiled)."""
    weights = proj.weights
    if weights is not None:
        weights = np.broadcast_to(np.atleast_2d(weights), proj.sq_norms.shape).reshape(1, -1)
    W = np.ascontiguousarray(proj.W.reshape(1, -1, proj.frame), dtype=dtype)
    phase = None if proj.phase is None else proj.phase.reshape(1, -1).astype(dtype)
    return Projections(W, proj.sq_norms.reshape(1, -1).astype(dtype), proj.d, weights, phase)


def slice_draws(proj: Projections, start: int, stop: int) -> Projections:
    """Draws ``start:stop`` of a batch of projections."""
    weights = proj.weights
    if weights is not None and np.ndim(weights) == 2:
        weights = weights[start:stop]
    phase = None if proj.phase is None else proj.phase[start:stop]
    return Projections(proj.W[start:stop], proj.sq_norms[start:stop], proj.d, weights, phase)


def _exp_inplace(a: np.ndarray) -> None:
    """a <- exp(a) for a <= 0, floored at ``EXP_FLOOR`` of its dtype (no denormals)."""
    floor = EXP_FLOOR.get(a.dtype)
    if floor is not None:
        np.maximum(a, floor, out=a)
    np.exp(a, out=a)


def _terms(est: Estimator, proj: Projections, X: np.ndarray, side: str, params: dict):
    """(log-magnitudes (n, F) or None, factor (n, F) or None) of one merged draw; a float32
    ``proj``/``X`` gives float32 arrays, the log-magnitudes checked against ``FLOAT32_MAX_LOG``.
    The row term is not used here: the key side takes it in float64 from :func:`row_terms`, and
    on the query side it is a positive factor per query, which does not change the argmax."""
    log_mag, factor, _ = est.projection_log_terms(proj, X, side, params)
    n = X.shape[0]
    if log_mag is not None:  # (1, n, M, l); l = 1: keep project()'s layout (no copy)
        log_mag = log_mag[0, :, :, 0] if log_mag.shape[-1] == 1 else log_mag.reshape(n, -1)
        if X.dtype == np.float32:
            _check_float32(max(float(np.max(log_mag)), -float(np.min(log_mag))))
    elif X.dtype == np.float32:
        arg = np.sqrt(float(np.max(proj.sq_norms)) * float(np.max(sq_norms(X), initial=0.0)))
        if arg > FLOAT32_MAX_ARG:
            raise Float32Unsafe(f"|ωᵀx| up to {arg:.0f} > {FLOAT32_MAX_ARG:.0f}")
    factor = None if factor is None else np.broadcast_to(factor, (1, n, *factor.shape[2:]))
    factor = None if factor is None else factor.reshape(n, -1)
    return log_mag, factor


def _check_float32(big: float) -> None:
    if big > FLOAT32_MAX_LOG:
        raise Float32Unsafe(f"|log-magnitude| {big:.0f} > {FLOAT32_MAX_LOG:.0f}")


def row_terms(est: Estimator, proj: Projections, X: np.ndarray, params: dict) -> np.ndarray:
    """The key map's per-row log term (n,) at the rows X (the component's own, e.g. ½‖x‖² for
    trig, DERF Def. 2.1) in float64, from the first projection of ``proj``: a row term is common
    to every feature, so no projection changes it, and one float64 projection costs n·d."""
    one = (slice(0, 1), slice(0, 1))  # the first draw's first projection
    phase = None if proj.phase is None else proj.phase[one].astype(np.float64)
    W, sq = proj.W[one].astype(np.float64), proj.sq_norms[one].astype(np.float64)
    first = Projections(W, sq, proj.d, None, phase)
    _, _, row = est.projection_log_terms(first, np.asarray(X, np.float64), "key", params)
    return np.broadcast_to(row, (1, len(X))).reshape(len(X)).astype(np.float64)


def key_reduce(
    est: Estimator, proj: Projections, params: dict, X: np.ndarray, r: np.ndarray, Y
) -> tuple[np.ndarray, np.ndarray]:
    """(S, c) with Σ_i ψ_f(x_i) Y_i = exp(c_f + max r)·S_f (up to a positive constant) for every
    feature column f of the merged draw ``proj``; S (F, C), c (F,). ``r`` (float64) are the
    per-row terms, α‖x‖² plus the map's own (:func:`row_terms`), summed in float64 before the
    cast: for the Gaussian kernel they cancel (trig: -½‖x‖² + ½‖x‖²), so float32 never has to
    carry ½‖σx‖² itself; rows are streamed in chunks with running per-column shifts."""
    S = c = None
    step = _rows(proj.count * est.features_per_projection)
    r = r - np.max(r)
    if X.dtype == np.float32:
        _check_float32(-float(np.min(r, initial=0.0)))
    for start in range(0, len(X), step):
        rows = slice(start, start + step)
        log_mag, factor = _terms(est, proj, X[rows], "key", params)
        shift = r[rows].astype(X.dtype)
        if log_mag is None:  # bounded (trig) features: the row term is a weight
            cc = np.full(factor.shape[1], float(np.max(shift)))
            weights = np.exp(shift - cc[0])[:, None] * Y[rows]
            part = weights.T @ factor
        else:
            log_mag += shift[:, None]
            cc = np.max(log_mag, axis=0)
            log_mag -= cc
            _exp_inplace(log_mag)
            part = Y[rows].T @ (log_mag if factor is None else log_mag * factor)
            cc = cc.astype(np.float64)
        part = part.T.astype(np.result_type(part.dtype, np.float64))
        if S is None:
            S, c = part, cc
            continue
        new = np.maximum(c, cc)
        S = S * np.exp(c - new)[:, None] + part * np.exp(cc - new)[:, None]
        c = new
    if proj.weights is not None:  # quadrature weights a_f (the 1/M of Monte Carlo is dropped)
        a = np.repeat(proj.quadrature_weights().reshape(-1), est.features_per_projection)
        S = S * a[:, None]
    return S, c


def query_scores(
    est: Estimator, proj: Projections, params: dict, Xq: np.ndarray, S, c, draws: int
) -> Iterator[tuple[slice, np.ndarray]]:
    """Scores (draws, rows, C) of chunks of queries, up to a positive factor per (draw, query)."""
    F = S.shape[0]
    S_draw = S.reshape(draws, F // draws, -1).astype(Xq.dtype if np.isrealobj(S) else S.dtype)
    step = _rows(F)
    for start in range(0, len(Xq), step):
        rows = slice(start, start + step)
        log_mag, factor = _terms(est, proj, Xq[rows], "query", params)
        n = Xq[rows].shape[0]
        if log_mag is None:
            w = factor * np.exp(c - np.max(c)).astype(factor.dtype)
        else:
            log_mag += c.astype(log_mag.dtype)
            w = log_mag.reshape(n, draws, -1)
            w -= np.max(w, axis=-1, keepdims=True)
            _exp_inplace(w)
            w = w.reshape(n, F) if factor is None else w.reshape(n, F) * factor
        scores = np.matmul(w.reshape(n, draws, -1).transpose(1, 0, 2), S_draw)
        yield rows, np.real(scores)


def _accuracies(est, proj: Projections, params, Xtr, Ytr, Xq, yq, dtype) -> np.ndarray:
    per_draw = max(1, proj.count * est.features_per_projection)
    batch = max(1, MAX_COLUMNS // per_draw)
    alpha_r = est.alpha * sq_norms(Xtr) if est.alpha else np.zeros(len(Xtr))
    Xtr_, Xq_, Y_ = (np.ascontiguousarray(a, dtype=dtype) for a in (Xtr, Xq, Ytr))
    out = np.empty(proj.draws)
    for b0 in range(0, proj.draws, batch):
        b1 = min(proj.draws, b0 + batch)
        merged = merge_draws(slice_draws(proj, b0, b1), dtype)
        r = alpha_r + row_terms(est, merged, Xtr, params)
        S, c = key_reduce(est, merged, params, Xtr_, r, Y_)
        correct = np.zeros(b1 - b0)
        for rows, scores in query_scores(est, merged, params, Xq_, S, c, b1 - b0):
            correct += np.sum(np.argmax(scores, axis=-1) == yq[rows], axis=-1)
        out[b0:b1] = correct / len(Xq)
    return out


def rf_accuracies(
    est: Estimator,
    proj: Projections,
    params: dict,
    Xtr: np.ndarray,
    Ytr: np.ndarray,
    Xq: np.ndarray,
    yq: np.ndarray,
    dtype: Any = np.float64,
) -> np.ndarray:
    """Accuracy of the random-feature classifier for every draw of ``proj``: (draws,).

    ``dtype``: float64 (default), float32 (raises ``Float32Unsafe`` outside its safe range) or
    ``"auto"`` (float32, falling back to float64 for the whole evaluation if needed).
    """
    if isinstance(dtype, str) and dtype == "auto":
        try:
            return _accuracies(est, proj, params, Xtr, Ytr, Xq, yq, np.float32)
        except Float32Unsafe:
            return _accuracies(est, proj, params, Xtr, Ytr, Xq, yq, np.float64)
    return _accuracies(est, proj, params, Xtr, Ytr, Xq, yq, np.dtype(dtype).type)


def exact_accuracy(
    kernel: str, Xtr: np.ndarray, Ytr: np.ndarray, Xq: np.ndarray, yq: np.ndarray
) -> float:
    """Accuracy of the exact-kernel classifier, scores Σ_i K(x*, x_i) y_i shifted per query."""
    correct = 0
    step = _rows(len(Xtr))
    for start in range(0, len(Xq), step):
        lk = log_kernel(kernel, Xq[start : start + step], Xtr)
        scores = np.exp(lk - lk.max(axis=1, keepdims=True)) @ Ytr
        correct += int(np.sum(np.argmax(scores, axis=1) == yq[start : start + step]))
    return correct / len(Xq)


def mean_pair_norm(Xq: np.ndarray, Xtr: np.ndarray) -> float:
    """v̄ = mean over (query, training) pairs of ‖x* + x_i‖ (SimRF Table 2's v̄, σ-scaled inputs)."""
    total = 0.0
    nt = sq_norms(Xtr)
    step = _rows(len(Xtr))
    for start in range(0, len(Xq), step):
        xq = Xq[start : start + step]
        v2 = sq_norms(xq)[:, None] + nt[None, :] + 2.0 * xq @ Xtr.T
        total += float(np.sqrt(np.maximum(v2, 0.0)).sum())
    return total / (len(Xq) * len(Xtr))
