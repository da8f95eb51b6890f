"""Kernel-regression classification with random features (SimRF §5.3; DERF §5.2, App. B.3).

The classifier scores a query x* by the unnormalised Nadaraya–Watson numerator
r̂(x*) = Σ_i K̂(x*, x_i) y_i = φ(x*)ᵀ(Ψᵀ Y), Y the one-hot training labels, and predicts its argmax
(the positive denominator does not change the argmax; for sign-indefinite trig features the
unnormalised form must be kept, DERF Sec. 5.2, Fig. 3; docs/experiments.md#derf-fig3; the SimRF code
does the same, docs/experiments.md#simrf-fig8).

Vectorised over trials: the ``draws`` of one estimator draw are merged into a single set of
draws·M projections (features are per-projection, so this is exact), the training features are
streamed over row chunks and reduced to Ψᵀ Y per feature column in the log domain — each column
keeps its own exact shift c_f, so no row is lost to underflow whatever the scale (σ = 100 in
DERF Fig. 3) — and each query's scores are shifted per draw. Positive per-query factors (the
query's log-scale, the Monte Carlo weight 1/M) are dropped: they do not change the argmax.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from rfbench.features.base import Draw, Estimator, Projections
from rfbench.kernels import log_kernel, sq_norms

#: elements of one chunk of features (8 MB of float64)
CHUNK = 1 << 20
#: most feature columns (draws × features per draw) processed at once
MAX_COLUMNS = 4096
#: a chunk whose row log-scales spread less than this shares one shift (no weight underflows)
COMMON_SHIFT_SPREAD = 300.0


def _rows(n_columns: int) -> int:
    return max(64, CHUNK // max(1, n_columns))


def merge_draws(proj: Projections) -> Projections:
    """The draws·M projections of ``proj`` as one draw (weights tiled; 1/M factors are dropped
    by the caller as a common positive scale)."""
    weights = proj.weights
    if weights is not None:
        weights = np.broadcast_to(np.atleast_2d(weights), proj.sq_norms.shape).reshape(1, -1)
    W = proj.W.reshape(1, -1, proj.frame)
    return Projections(W, proj.sq_norms.reshape(1, -1), proj.d, weights)


def slice_draws(proj: Projections, start: int, stop: int) -> Projections:
    """Draws ``start:stop`` of a batch of projections."""
    weights = proj.weights
    if weights is not None and np.ndim(weights) == 2:
        weights = weights[start:stop]
    return Projections(proj.W[start:stop], proj.sq_norms[start:stop], proj.d, weights)


def _log_abs_phase(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log|v|, v/|v|) with log 0 = -inf and phase 0 for v = 0."""
    mag = np.abs(values)
    with np.errstate(divide="ignore"):
        log_mag = np.log(mag)
    phase = np.divide(values, mag, out=np.zeros_like(values), where=mag > 0)
    return log_mag, phase


def key_reduce(
    est: Estimator, draw: Draw, X: np.ndarray, Y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(S, c) with Σ_i ψ_f(x_i) Y_i = exp(c_f)·S_f for every feature column f of a one-draw
    ``draw``: S (F, C), c (F,). Streamed over row chunks with running per-column shifts."""
    S = c = None
    F = est.key_log_features(draw, X[:1]).values.shape[-1]
    step = _rows(F)
    for start in range(0, len(X), step):
        feats = est.key_log_features(draw, X[start : start + step])
        v, ls, y = feats.values[0], feats.log_scale[0], Y[start : start + step]
        top = float(ls.max())
        if top - float(ls.min()) <= COMMON_SHIFT_SPREAD:
            part, cc = v.T @ (y * np.exp(ls - top)[:, None]), np.full(F, top)
        else:  # rows far apart: shift each column by its own maximum
            log_mag, phase = _log_abs_phase(v)
            log_mag += ls[:, None]
            cc = np.max(log_mag, axis=0)
            cc = np.where(np.isfinite(cc), cc, top)
            part = (phase * np.exp(log_mag - cc)).T @ y
        if S is None:
            S, c = part, cc
            continue
        new = np.maximum(c, cc)
        S = S * np.exp(c - new)[:, None] + part * np.exp(cc - new)[:, None]
        c = new
    return S, c


def query_scores(
    est: Estimator, draw: Draw, Xq: np.ndarray, S: np.ndarray, c: np.ndarray, draws: int
) -> Iterator[tuple[slice, np.ndarray]]:
    """Scores (draws, rows, C) of chunks of queries, up to a positive factor per (draw, query)."""
    F = S.shape[0]
    per = F // draws
    S_draw = S.reshape(draws, per, -1)
    step = _rows(F)
    for start in range(0, len(Xq), step):
        feats = est.query_log_features(draw, Xq[start : start + step])
        log_mag, phase = _log_abs_phase(feats.values[0])
        log_mag = (log_mag + c).reshape(len(log_mag), draws, per)
        top = np.max(log_mag, axis=-1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        w = phase.reshape(log_mag.shape) * np.exp(log_mag - top)
        scores = np.einsum("qbf,bfc->bqc", w, S_draw)
        yield slice(start, start + len(log_mag)), np.real(scores)


def rf_accuracies(
    est: Estimator,
    proj: Projections,
    params: dict,
    Xtr: np.ndarray,
    Ytr: np.ndarray,
    Xq: np.ndarray,
    yq: np.ndarray,
) -> np.ndarray:
    """Accuracy of the random-feature classifier for every draw of ``proj``: (draws,)."""
    per_draw = max(1, proj.count)
    batch = max(1, MAX_COLUMNS // per_draw)
    out = np.empty(proj.draws)
    for b0 in range(0, proj.draws, batch):
        b1 = min(proj.draws, b0 + batch)
        merged = Draw({"omega": merge_draws(slice_draws(proj, b0, b1))}, params, proj.d)
        S, c = key_reduce(est, merged, Xtr, Ytr)
        correct = np.zeros(b1 - b0)
        for rows, scores in query_scores(est, merged, Xq, S, c, b1 - b0):
            correct += np.sum(np.argmax(scores, axis=-1) == yq[rows], axis=-1)
        out[b0:b1] = correct / len(Xq)
    return out


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
