"""RF-conformity of fixed configurations, its optimum over directions and the pair-norm densities
(SimRF Eqs. 12, 18–20, Fig. 4, 5; docs/experiments.md#simrf-fig4, #simrf-fig5)."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, hyp0f1, logsumexp, xlogy

from rfbench.compute.features.theory.coupled import coupling_cosine, half_rule
from rfbench.compute.features.weights.mc import simplex_directions, simplex_plus_directions
from rfbench.compute.kernels import sq_norms


def pair_norm_density(coupling: str, d: int, w) -> np.ndarray:
    """Density of w_ij = ‖ω_i + ω_j‖ (Fig. 5): iid Eq. 18; ORF/SimRF p_θ of Eq. 20 (ORF: χ_{2d})."""
    w = np.asarray(w, dtype=float)
    c = coupling_cosine(coupling, d)
    if c is None:
        return np.exp(xlogy(d - 1, w) - w**2 / 4 - (d - 1) * np.log(2) - gammaln(d / 2))
    phi, log_q = half_rule()
    q = 1 + np.sin(2 * phi) * c
    log_terms = log_q + (d - 1) * np.log(np.sin(phi) * np.cos(phi)) - d * np.log(q)
    log_int = logsumexp(log_terms - w[..., None] ** 2 / (2 * q), axis=-1)
    return np.exp(xlogy(2 * d - 1, w) - (d - 2) * np.log(2) - 2 * gammaln(d / 2) + log_int)


def pair_conformity_integrand(d: int, w, v) -> np.ndarray:
    """f(w, v) = 0F1(; d/2; v²w²/4), the angular mean of exp(ω_ijᵀ(x+y)) (Eqs. 31–33; Fig. 5)."""
    return hyp0f1(d / 2, (np.asarray(v, float) * np.asarray(w, float)) ** 2 / 4)


def config_conformity(W: np.ndarray, v: float) -> np.ndarray:
    """ρ of fixed rows W (..., m, d), expectation removed (Eq. 12): mean_{i≠j} f(‖w_i + w_j‖, v)."""
    W = np.asarray(W, dtype=float)
    m, d = W.shape[-2:]
    sq = sq_norms(W)
    q = sq[..., :, None] + sq[..., None, :] + 2 * W @ np.swapaxes(W, -1, -2)
    vals = pair_conformity_integrand(d, np.sqrt(np.maximum(q, 0.0)), v)
    return (vals.sum(axis=(-2, -1)) - np.trace(vals, axis1=-2, axis2=-1)) / (m * (m - 1))


def optimal_conformity(
    norms: np.ndarray, v: float, rng: np.random.Generator, starts: int = 4
) -> tuple[float, np.ndarray]:
    """Numerically minimised ρ over the directions for fixed norms (Fig. 4), by L-BFGS.

    Directions are free vectors normalised row-wise; starts: SimRF+ then random. Returns (ρ, W).
    """
    from scipy.optimize import minimize

    norms = np.asarray(norms, dtype=float)
    m, b = norms.size, norms.size / 2

    def value_and_grad(flat: np.ndarray) -> tuple[float, np.ndarray]:
        U = flat.reshape(m, m)
        lengths = np.linalg.norm(U, axis=1, keepdims=True)
        W = norms[:, None] * U / lengths
        sq = sq_norms(W)
        z = v**2 * (sq[:, None] + sq[None, :] + 2 * W @ W.T) / 4
        slope = v**2 / (4 * b) * hyp0f1(b + 1, z)  # dF/dq with F(q) = 0F1(; b; v²q/4)
        np.fill_diagonal(slope, 0.0)
        grad_w = 4 / (m * (m - 1)) * (slope.sum(axis=1)[:, None] * W + slope @ W)
        U_hat = U / lengths
        radial = np.sum(grad_w * U_hat, axis=1, keepdims=True) * U_hat
        grad_u = norms[:, None] / lengths * (grad_w - radial)
        return float(config_conformity(W, v)), grad_u.ravel()

    inits = [simplex_plus_directions(norms[None])[0]] + [
        rng.standard_normal((m, m)) for _ in range(starts - 1)
    ]
    best = min(
        (minimize(value_and_grad, u.ravel(), jac=True, method="L-BFGS-B") for u in inits),
        key=lambda res: res.fun,
    )
    U = best.x.reshape(m, m)
    return float(best.fun), norms[:, None] * U / np.linalg.norm(U, axis=1, keepdims=True)


def fig4_conformities(
    norms: np.ndarray,
    v: float,
    rng: np.random.Generator,
    iid_couplings: int = 100,
    passes: int = 15,
) -> dict[str, np.ndarray | float]:
    """Fig. 4 (SimRF Fig. 4; docs/experiments.md#simrf-fig4): ρ_config of one draw of norms (d = m)
    under each coupling.

    iid: (mean, population sd) over random directions; orf, simrf: one value (rotation invariant);
    simrf-plus: values after 0..passes full passes; optimum: L-BFGS value.
    """
    norms = np.asarray(norms, dtype=float)
    d = norms.size
    U = rng.standard_normal((iid_couplings, d, d))
    iid = config_conformity(norms[:, None] * U / np.linalg.norm(U, axis=-1, keepdims=True), v)
    plus = [
        config_conformity(norms[:, None] * simplex_plus_directions(norms[None], k)[0], v)
        for k in range(passes + 1)
    ]
    return {
        "iid": np.array([iid.mean(), iid.std()]),
        "orf": float(config_conformity(np.diag(norms), v)),
        "simrf": float(config_conformity(norms[:, None] * simplex_directions(d), v)),
        "simrf-plus": np.array(plus),
        "optimum": optimal_conformity(norms, v, rng)[0],
    }
