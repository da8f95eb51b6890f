"""``@fitted``: rows ω_i ~ N(0, Σ), Σ = I + E[(x + y)(x + y)ᵀ] fitted to the data, with importance
weights p/(M q) (DARKFormer, Farzam et al., arXiv 2603.04127; docs/methods.md#fitted-coupling)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute.features.base import (
    Projections,
    WeightsSampler,
    check_inputs,
    full_projections,
)
from rfbench.compute.features.registry import register_weights
from rfbench.compute.kernels import sq_norms


def fitted_covariance(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Σ = I + E[(x + y)(x + y)ᵀ] over every pair of rows (x of X, y of Y).

    Parameters
    ----------
    X : ndarray, shape (N, d)
    Y : ndarray, shape (N', d)

    Returns
    -------
    ndarray, shape (d, d)
    """
    mx, my = X.mean(axis=0), Y.mean(axis=0)
    second = X.T @ X / len(X) + Y.T @ Y / len(Y) + np.outer(mx, my) + np.outer(my, mx)
    return np.eye(X.shape[1]) + 0.5 * (second + second.T)


def positive_second_moment(x: np.ndarray, y: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """log E_q[(p/q)² f(ω, x)² f(ω, y)²] of one positive feature f(ω, u) = e^{ωᵀu − ‖u‖²/2},
    ω ~ q = N(0, Σ) (module doc); the MSE of M i.i.d. terms is (e^this − K²)/M.

    Parameters
    ----------
    x, y : ndarray, shape (..., d)
    cov : ndarray, shape (d, d)
        Σ with 2I − Σ⁻¹ positive definite.

    Returns
    -------
    ndarray, shape (...)
    """
    d = cov.shape[0]
    B = 2.0 * np.eye(d) - np.linalg.inv(cov)
    z = x + y
    quad = np.einsum("...i,...i->...", z @ np.linalg.inv(B), z)
    logdet = 0.5 * np.linalg.slogdet(cov)[1] - 0.5 * np.linalg.slogdet(B)[1]
    return logdet + 2.0 * quad - sq_norms(x) - sq_norms(y)


@register_weights
class Fitted(WeightsSampler):
    """ω_i ~ N(0, Σ) i.i.d., Σ fitted to the data, with importance weights p/q (module doc)."""

    name = "fitted"
    description = "Gaussian rows N(0, Σ), Σ = I + E[(x+y)(x+y)ᵀ] fitted to the data; weights p/q"
    paper = "DARKFormer (arXiv 2603.04127): data-aware Gaussian proposal, importance-weighted"
    marginally_gaussian = False
    importance_weighted = True
    data_dependent = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.cov: np.ndarray | None = None
        self._chol: np.ndarray | None = None
        self._half_logdet = 0.0

    def fitted(self, X: np.ndarray, Y: np.ndarray) -> Fitted:
        """A copy with Σ fitted to queries X (N, d) and keys Y (N', d)."""
        out = Fitted()
        out.cov = fitted_covariance(check_inputs(X), check_inputs(Y))
        out._chol = np.linalg.cholesky(out.cov)
        out._half_logdet = float(np.sum(np.log(np.diag(out._chol))))
        return out

    def fit_params(self) -> dict[str, Any]:
        """Σ as a draw parameter (``proposal_cov``), for the closed-form MSE."""
        return {} if self.cov is None else {"proposal_cov": self.cov}

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        if self._chol is None:
            raise ValueError("weights 'fitted' are fitted to data: pass fit=(X, Y) to sample()")
        if self._chol.shape[0] != d:
            raise ValueError(f"Σ was fitted in R^{self._chol.shape[0]}, not R^{d}")
        G = rng.standard_normal((draws, m, d))
        W = G @ self._chol.T  # ω = L g, so ωᵀΣ⁻¹ω = ‖g‖²
        log_ratio = self._half_logdet - 0.5 * sq_norms(W) + 0.5 * sq_norms(G)
        return full_projections(W, np.exp(log_ratio) / m)

    def draw_flops(self, count: float, d: int) -> float:
        """P·d Gaussian samples, L g (2d² per row) and two squared norms."""
        return float(count * (d + 2 * d * d + 4 * d))
