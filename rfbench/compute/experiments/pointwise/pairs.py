"""Pointwise estimation on the user's own pairs (``rfbench pointwise --data FILE``): rows (Q[i],
K[i]) of an ``.npz``, or consecutive rows (X[2i], X[2i+1]) of one matrix
(:mod:`rfbench.compute.datasets.user`).

A rotation-invariant estimator is sampled on the canonical pair (‖x‖e₁, ‖y‖(cos θ e₁ + sin θ e₂)) in
a 2-D frame, any other on the vectors. Rows carry ``pair_index``, both norms and the angle; ``r``
stays empty (the Gaussian hybrid's normaliser uses the median norm).
"""

from __future__ import annotations

import numpy as np

from rfbench.compute.datasets import user
from rfbench.compute.features.base import Estimator


def load_pairs(name: str, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``limit`` pairs (x_i, y_i) of a point file, as two (P, d) arrays."""
    Q, K = user.load_points(name)
    if Q is K:  # a single matrix X: consecutive rows pair up
        Q, K = Q[0 : len(Q) - 1 : 2], Q[1::2]
    if len(Q) != len(K):
        raise user.DataError(f"data file {name}: Q has {len(Q)} rows but K has {len(K)}")
    if len(Q) == 0:
        raise user.DataError(f"data file {name}: no pairs (a single row)")
    return Q[:limit], K[:limit]


def angles(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The angle θ_i between x_i and y_i (0 where either is zero)."""
    nx, ny = np.linalg.norm(x, axis=1), np.linalg.norm(y, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.einsum("ij,ij->i", x, y) / (nx * ny)
    return np.arccos(np.clip(np.nan_to_num(cos, nan=1.0), -1.0, 1.0))


def canonical(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs with the same norms and angles, in the span of e₁, e₂."""
    theta = angles(x, y)
    cx, cy = np.zeros_like(x), np.zeros_like(y)
    cx[:, 0] = np.linalg.norm(x, axis=1)
    ny = np.linalg.norm(y, axis=1)
    cy[:, 0], cy[:, 1] = ny * np.cos(theta), ny * np.sin(theta)
    return cx, cy


def inputs_for(est: Estimator, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs an estimator is sampled on: canonical if rotation-invariant, else as given."""
    return canonical(x, y) if est.rotation_invariant and x.shape[1] > 2 else (x, y)


def pair_columns(x: np.ndarray, y: np.ndarray) -> list[dict[str, float | int]]:
    """Per pair: its index and both norms (merged into that pair's rows)."""
    nq, nk = np.linalg.norm(x, axis=1), np.linalg.norm(y, axis=1)
    return [
        {"pair_index": i, "norm_q": float(nq[i]), "norm_k": float(nk[i])} for i in range(len(x))
    ]
