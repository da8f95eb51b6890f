"""Σ (K̂ − K)² of one draw's Gram estimate without materialising K̂ (docs/experiments.md#hrf-fig6).

K̂ = Re ΦΨᵀ·e^{row + col} (rfbench.compute.features.maps.bilinear_estimate) is formed a block of
rows at a time from the maps (moderate scales multiplied into their rows), compared with K and
squared while the block is in cache; the estimates of a map's first projections are partial sums
of the same blocks. A sum that is not finite is recomputed by the materialising path, which
reports an estimate out of range (EstimateRangeError) exactly as the estimator's ``estimate`` does.
"""

from __future__ import annotations

import numpy as np

from rfbench.compute.features.base import Features, bilinear_estimate
from rfbench.compute.features.maps import SAFE_LOG

#: rows of K̂ per block (ROWS × N' float64: 2 MB for N' = 2000; 64 to 256 measured alike)
ROWS = 128


def gram_sse(G: np.ndarray, T: np.ndarray) -> float:
    """Σ (G − T)² (G is overwritten)."""
    np.subtract(G, T, out=G)
    return float(np.vdot(G, G))


def real_operands(phi: np.ndarray, psi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) with a bᵀ = Re ΦΨᵀ whose first columns are those of Φ's first columns (a complex
    column as its real and imaginary parts side by side), so prefixes stay prefixes."""
    if not (np.iscomplexobj(phi) or np.iscomplexobj(psi)):
        return phi, psi
    a = np.stack([phi.real, phi.imag], axis=-1).reshape(len(phi), -1)
    b = np.stack([psi.real, -psi.imag], axis=-1).reshape(len(psi), -1)
    return a, b


def product_sse(
    phi: np.ndarray,
    psi: np.ndarray,
    T: np.ndarray,
    row_log: np.ndarray | None = None,
    col_log: np.ndarray | None = None,
) -> float:
    """Σ (Re(ΦΨᵀ)_ij·e^{row_log_i + col_log_j} − T_ij)² for Φ (N, F), Ψ (N', F), T (N, N');
    no scales: Σ (Re ΦΨᵀ − T)². Moderate scales (maps.scaled_estimate's) are multiplied into the
    rows of the maps, others into each block as e^{row + col}. Not finite: NaN or ±inf (the
    caller decides)."""
    a, b = real_operands(phi, psi)
    scaled = row_log is not None and col_log is not None
    folded = scaled and moderate(row_log, col_log)
    if folded:
        a, b = a * np.exp(row_log)[:, None], b * np.exp(col_log)[:, None]
    bt = b.T
    total = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, len(a), ROWS):
            rows = slice(start, start + ROWS)
            G = a[rows] @ bt
            if scaled and not folded:
                G *= np.exp(row_log[rows, None] + col_log[None, :])
            G -= T[rows]
            total += float(np.vdot(G, G))
    return total


def moderate(*logs: np.ndarray) -> bool:
    """Whether every log scale is below maps.SAFE_LOG in magnitude (e^scale cannot overflow)."""
    return all(np.max(np.abs(s), initial=0.0) < SAFE_LOG for s in logs)


def entries(T: np.ndarray, rows: slice | np.ndarray, cols: slice | np.ndarray) -> np.ndarray:
    """The block (rows, cols) of T, ascending index arrays allowed: a view where they are ranges."""
    rows, cols = _as_slice(rows), _as_slice(cols)
    if isinstance(rows, slice) and isinstance(cols, slice):
        return T[rows, cols]
    return T[np.ix_(np.arange(T.shape[0])[rows], np.arange(T.shape[1])[cols])]


def _as_slice(index: slice | np.ndarray) -> slice | np.ndarray:
    if isinstance(index, slice) or index[-1] - index[0] + 1 != index.size:
        return index
    return slice(int(index[0]), int(index[-1]) + 1)


def features_sse(query: Features, key: Features, T: np.ndarray) -> float:
    """Σ (K̂ − T)² of the one-draw estimate K̂ = ``bilinear_estimate(query, key)[0]``."""
    total = product_sse(query.values[0], key.values[0], T, query.log_scale[0], key.log_scale[0])
    if np.isfinite(total):
        return total
    return gram_sse(bilinear_estimate(query, key)[0], T)


def prefix_sse(a: np.ndarray, b: np.ndarray, T: np.ndarray, widths: list[int]) -> list[float]:
    """Σ (K̂_w − T)² for every width w (ascending) of the first w columns of a Monte Carlo map
    of F = a.shape[1] real columns: K̂_w = (F/w)·a[:, :w] b[:, :w]ᵀ, the estimate of the first
    projections alone, the map's 1/F weight made 1/w. One product of the widest maps, each
    estimate's sum taken on the way, a block of rows at a time. Not finite: NaN or ±inf (the
    caller decides).
    """
    bt = b.T
    totals = [0.0] * len(widths)
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, len(a), ROWS):
            rows = slice(start, start + ROWS)
            acc = np.zeros((a[rows].shape[0], T.shape[1]))
            done = 0
            for k, w in enumerate(widths):
                acc += a[rows, done:w] @ bt[done:w]
                done = w
                G = acc * (a.shape[1] / w)
                G -= T[rows]
                totals[k] += float(np.vdot(G, G))
    return totals


def features_prefix_sse(
    query: Features, key: Features, T: np.ndarray, counts: list[int]
) -> list[float] | None:
    """:func:`prefix_sse` of one-draw Monte Carlo maps of ``counts[-1]`` projections (each
    projection's features side by side) for their first ``counts[k]`` projections; None when a
    scale is not moderate or a sum is not finite (the per-count path decides)."""
    logs = query.log_scale[0], key.log_scale[0]
    if not moderate(*logs):
        return None
    a, b = real_operands(query.values[0], key.values[0])
    a, b = a * np.exp(logs[0])[:, None], b * np.exp(logs[1])[:, None]
    totals = prefix_sse(a, b, T, [a.shape[1] // counts[-1] * m for m in counts])
    return totals if np.all(np.isfinite(totals)) else None
