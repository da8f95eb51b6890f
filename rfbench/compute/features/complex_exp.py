"""Complex-exponential random features Ψ_A(x) = exp(-(Ax)²/2)·exp(ωᵀAx), key side B = (Aᵀ)⁻¹
(HRF Sec. 2.3, Lemma 2.4, Eq. 13–18; docs/methods.md#complex-exp, #hrf-erratum-11, #hrf-erratum-12),
and the diagonal A per pair of cluster centres of the clustering hybrid (HRF App. H, Eq. 83–88;
docs/methods.md#hrf-cluster-hybrid)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute.features.base import Component, Projections, Side
from rfbench.compute.features.registry import register_component

#: stand-in for the "large positive" entries of Eq. 86–88 (the released notebook uses 1e16)
LARGE = 1e16


@register_component
class ComplexExp(Component):
    """Ψ_A(u) = exp(-(Au)²/2)·exp(ωᵀAu) (query), the same with B = (Aᵀ)⁻¹ (key); HRF Eq. 15–16.

    Options: ``A`` — a complex scalar c (meaning c·I) or a d×d matrix; ``diag`` — a length-d
    complex diagonal. Default A = i·I (trig in the real part). Full projections ω are needed
    unless A is a multiple of the identity (``rotation_invariant`` is set per instance).
    """

    name = "complex-exp"
    complex_valued = True
    description = "complex exponential features exp(ωᵀAx - (Ax)²/2), key side (Aᵀ)⁻¹"
    paper = "HRF Sec. 2.3 Eq. 15-16"
    positive = False
    symmetric = False

    def __init__(
        self, A: complex | np.ndarray | None = None, diag: np.ndarray | None = None
    ) -> None:
        if A is not None and diag is not None:
            raise TypeError("complex-exp takes either A or diag, not both")
        self.scalar: complex | None = None
        self.diag: np.ndarray | None = None
        self.matrix: np.ndarray | None = None
        if diag is not None:
            self.diag = np.asarray(diag, dtype=complex).ravel()
            self._check_invertible(self.diag)
            self.key_diag = 1.0 / self.diag
            entries = self.diag
        elif A is not None and np.ndim(A) == 2:
            self.matrix = np.asarray(A, dtype=complex)
            if self.matrix.shape[0] != self.matrix.shape[1]:
                raise ValueError(f"A must be square, got shape {self.matrix.shape}")
            # B = (Aᵀ)⁻¹, applied to rows as Y Bᵀ = Y A⁻¹ (raises if A is singular)
            self.key_matrix = np.linalg.inv(self.matrix)
            entries = self.matrix
        else:
            self.scalar = complex(1j if A is None else np.asarray(A).item())
            self._check_invertible(np.array([self.scalar]))
            entries = np.array([self.scalar])
        self.real = bool(np.all(np.imag(entries) == 0))
        self.positive = self.real
        self.rotation_invariant = self.scalar is not None

    @staticmethod
    def _check_invertible(entries: np.ndarray) -> None:
        if np.any(entries == 0) or not np.all(np.isfinite(entries)):
            raise ValueError("complex-exp needs an invertible A (nonzero, finite diagonal)")

    def apply(self, X: np.ndarray, side: Side) -> np.ndarray:
        """Au (query) or Bu = (Aᵀ)⁻¹u (key) for rows u of X: complex, same shape as X."""
        X = np.asarray(X, dtype=float)
        if self.scalar is not None:
            return X * (self.scalar if side == "query" else 1.0 / self.scalar)
        d = X.shape[-1]
        size = self.diag.size if self.diag is not None else self.matrix.shape[0]
        if d != size:
            raise ValueError(f"complex-exp A is {size}-dimensional, inputs have {d} coordinates")
        if self.diag is not None:
            return X * (self.diag if side == "query" else self.key_diag)
        return X @ (self.matrix.T if side == "query" else self.key_matrix)

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        U = self.apply(X, side)
        if self.real:
            U = U.real
        proj_u = U @ np.swapaxes(proj.W, -1, -2)  # ωᵀ(Au): (draws, N, M)
        sq = np.einsum("...i,...i->...", U, U)  # bilinear (Au)ᵀ(Au), no conjugation
        if self.real:
            return proj_u[..., None], None, -0.5 * sq
        phase = proj_u.imag - 0.5 * sq.imag[..., None]
        return proj_u.real[..., None], np.exp(1j * phase)[..., None], -0.5 * sq.real


def _pair(r_i: np.ndarray, r_j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r_i, r_j = np.asarray(r_i, dtype=float), np.asarray(r_j, dtype=float)
    if r_i.shape != r_j.shape:
        raise ValueError(f"centres have shapes {r_i.shape} and {r_j.shape}")
    return r_i, r_j


def real_diagonal_A(r_i: np.ndarray, r_j: np.ndarray, large: float = LARGE) -> np.ndarray:
    """Real diagonal A = diag(a_k) minimising l(A) = ‖A r_i + A⁻¹ r_j‖² (HRF Eq. 88).

    a_k = sqrt(|r_jk / r_ik|); ``large`` if r_ik = 0 ≠ r_jk (the notebook's 1e16); 1 if both are 0;
    and 1/``large`` if r_ik ≠ 0 = r_jk (Eq. 88 would give a singular 0 there; documented choice).
    The minimum is l = 4 Σ_{k: r_ik r_jk > 0} r_ik r_jk (HRF App. H.2;
    docs/methods.md#hrf-cluster-hybrid).
    """
    r_i, r_j = _pair(r_i, r_j)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.sqrt(np.abs(r_j / r_i))
    a = np.where(r_i == 0, np.where(r_j == 0, 1.0, large), a)
    return np.where((r_i != 0) & (r_j == 0), 1.0 / large, a)


def complex_diagonal_A(r_i: np.ndarray, r_j: np.ndarray, large: float = LARGE) -> np.ndarray:
    """Complex diagonal A = diag(α_k + iβ_k) with A r_i + A⁻¹ r_j = 0 (HRF Eq. 83–87).

    r_ik r_jk > 0: iβ, β = sqrt(r_jk/r_ik) (Eq. 86, a "trigonometric" coordinate);
    r_ik r_jk < 0: α = sqrt(-r_jk/r_ik) (Eq. 87, a "positive" coordinate); both 0: 1 + i;
    r_ik = 0 ≠ r_jk: α = ``large``; r_ik ≠ 0 = r_jk: α = β = 1/``large``.
    The estimator is then exact (zero variance) at x = r_i, y = r_j (HRF Eq. 17).
    """
    r_i, r_j = _pair(r_i, r_j)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = r_j / r_i
        out = np.where(ratio > 0, 1j * np.sqrt(np.abs(ratio)), np.sqrt(np.abs(ratio)) + 0j)
    out = np.where(r_i == 0, np.where(r_j == 0, 1 + 1j, large + 0j), out)
    return np.where((r_i != 0) & (r_j == 0), (1 + 1j) / large, out)
