"""Unit-cube couplings: randomised QMC (Halton, Sobol', rank-1 lattice), moment matching, SSF*
(Spectraformer Sec. 3.3, eq. 28; Avron et al. 2016; docs/methods.md#qmc).

Every draw is randomised independently, so each row is exactly N(0, I_d)."""

from __future__ import annotations

import math
from functools import lru_cache
from math import gcd

import numpy as np
from scipy import special

from rfbench.compute.features.base import Projections, WeightsSampler, full_projections
from rfbench.compute.features.registry import register_weights
from rfbench.compute.features.weights.blocks import haar_frames
from rfbench.compute.features.weights.ndtri import ndtri_inplace
from rfbench.compute.features.weights.scrambling import halton_points, sobol_points

#: the open interval guard: t = 0 or 1 (Φ⁻¹ = ∓∞) only arise from float rounding (< 1e-16)
_T_LOW, _T_HIGH = 2.0**-54, 1.0 - 2.0**-53


def gaussian_from_unit(t: np.ndarray) -> np.ndarray:
    """Φ⁻¹(t) coordinatewise (scipy.special.ndtri), t guarded into the open interval (0, 1).

    The result is a new C-ordered array (the guard and Φ⁻¹ run in place in it)."""
    out = np.empty(np.shape(t))
    np.clip(t, _T_LOW, _T_HIGH, out=out)
    return special.ndtri(out, out=out)


class _UnitCube(WeightsSampler):
    """ω_i = Φ⁻¹(t_i) for randomised points t (draws, m, d) in [0, 1)^d."""

    def points(self, rng: np.random.Generator, d: int, m: int, draws: int) -> np.ndarray:
        raise NotImplementedError

    def draw_flops(self, count: float, d: int) -> float:
        """P·d·(log₂P + 2): the digit scrambling and the normal quantile."""
        return count * d * (math.log2(max(count, 2)) + 2)

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        return full_projections(gaussian_from_unit(self.points(rng, d, m, draws)))


@register_weights
class Halton(_UnitCube):
    """Halton points, randomised per draw by linear scrambling + a digital shift in each base
    (``scrambling.halton_points``)."""

    name = "halton"
    description = "randomised QMC: scrambled Halton points through the normal quantile"
    paper = "Spectraformer eq. 28 (QMC); Avron et al. 2016"

    def points(self, rng: np.random.Generator, d: int, m: int, draws: int) -> np.ndarray:
        return halton_points(rng, d, m, draws)


@register_weights
class Sobol(_UnitCube):
    """Sobol' points, randomised per draw by LMS + a digital shift (``scrambling.sobol_points``; a
    full (t, m, d)-net for m a power of two), Φ⁻¹ by ``ndtri.ndtri_inplace``."""

    name = "sobol"
    description = "randomised QMC: scrambled Sobol' points through the normal quantile"
    paper = "Spectraformer eq. 28 (QMC); Avron et al. 2016"

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        # the points are (k + ½)·2^-52, strictly inside (0, 1): Φ⁻¹ in place, no guard pass,
        # block by block as they are written (Φ⁻¹ is most of the cost: ~1.1x an i.i.d.
        # Gaussian draw; scipy's ndtri takes 1.5x)
        return full_projections(sobol_points(rng, d, m, draws, then=ndtri_inplace))


@lru_cache(maxsize=64)
def korobov_generator(m: int, d: int) -> int:
    """The Korobov parameter a for an m-point lattice in d dimensions.

    Exhaustive search over units a mod m (gcd(a, m) = 1) of the lattice's packing radius: the
    minimum toroidal distance between two of its points, min_{i≠0} ‖{i z/m}‖_torus with
    z = (1, a, …, a^{d−1}) mod m (the lattice is a group, so point 0 suffices); ties go to the
    smallest a. O(m²d) once per (m, d). For m a power of two the multiplicative order of a is at
    most m/4, so coordinates repeat once d > m/4 — a limitation of Korobov lattices.
    """
    if m <= 2:
        return 1
    i = np.arange(1, m)[:, None]
    best, best_a = -1.0, 1
    for a in range(1, m):
        if gcd(a, m) != 1:
            continue
        z = korobov_vector(m, d, a)
        frac = (i * z % m) / m
        dist = np.min(np.sum(np.minimum(frac, 1.0 - frac) ** 2, axis=1))
        if dist > best + 1e-12:
            best, best_a = dist, a
    return best_a


def korobov_vector(m: int, d: int, a: int) -> np.ndarray:
    """z = (1, a, a², …, a^{d−1}) mod m, exact in integers."""
    z = np.empty(d, dtype=np.int64)
    z[0] = 1 % m
    for k in range(1, d):
        z[k] = z[k - 1] * a % m
    return z


@register_weights
class Lattice(_UnitCube):
    """Rank-1 Korobov lattice t_i = {i z/m + Δ}, z from ``korobov_generator``, with a
    Cranley–Patterson shift Δ ~ U[0, 1)^d per draw (every point exactly uniform)."""

    name = "lattice"
    description = "randomised QMC: shifted rank-1 Korobov lattice through the normal quantile"
    paper = "Spectraformer §3.2 (rank-1 lattice); Cranley & Patterson 1976"

    def points(self, rng: np.random.Generator, d: int, m: int, draws: int) -> np.ndarray:
        z = korobov_vector(m, d, korobov_generator(m, d))
        base = (np.arange(m)[:, None] * z % m) / m
        t = base + rng.random((draws, 1, d))
        t -= np.floor(t)  # t mod 1, exactly (t < 2): the same bits as np.remainder, 9x faster
        return t


@register_weights
class MomentMatching(WeightsSampler):
    """Moment matching (Shen et al. 2017; Spectraformer Sec. 3.3; docs/methods.md#qmc): Gaussian
    rows whitened by chol(Ĉ + 10⁻⁶ I) to sample mean 0, covariance ≈ I. Slightly biased; needs m >
    d."""

    name = "mm"
    description = "moment matching: i.i.d. Gaussian rows whitened to sample mean 0, covariance I"
    paper = "Spectraformer §3.2 (MM); Shen et al. 2017"
    marginally_gaussian = False

    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections:
        if m <= d:
            raise ValueError(f"weights 'mm' need m > d (got m = {m}, d = {d})")
        W = gaussian_from_unit(rng.random((draws, m, d)))
        W -= W.mean(axis=1, keepdims=True)
        C = np.swapaxes(W, 1, 2) @ W / m + 1e-6 * np.eye(d)
        L = np.linalg.cholesky(C)
        return full_projections(np.swapaxes(np.linalg.solve(L, np.swapaxes(W, 1, 2)), 1, 2))


def kronecker_points(m: int, d: int) -> np.ndarray:
    """t_i = {½ + (i+1) α}, α_j = φ_d^{−(j+1)}, φ_d the root > 1 of x^{d+1} = x + 1 (m, d).

    The generalised golden-ratio (R_d) Kronecker sequence (Roberts 2018): deterministic, well
    spread in every dimension, and never 0 or ½ for i ≥ 0 (α is irrational).
    """
    phi = 2.0
    for _ in range(60):  # fixed-point iteration x ← (1 + x)^{1/(d+1)}, converges to φ_d
        phi = (1.0 + phi) ** (1.0 / (d + 1))
    alpha = phi ** -np.arange(1.0, d + 1.0)
    return (0.5 + np.arange(1.0, m + 1.0)[:, None] * alpha) % 1.0


@lru_cache(maxsize=16)
def riesz_directions(m: int, d: int, steps: int) -> np.ndarray:
    """m unit vectors in R^d of low Riesz (d−1)-energy Σ_{i<j} ‖v_i − v_j‖^{−(d−1)}, (m, d).

    Deterministic: starts from Φ⁻¹ of ``kronecker_points``, normalised, then takes
    ``steps`` projected-gradient steps (tangent force, renormalise), each accepted only if it
    lowers the energy (else the step halves). Distances come from the Gram matrix, so memory is
    O(m²). Forces and energies are formed relative to their maximum (log space) because
    r^{−(d−1)} spans hundreds of orders of magnitude.
    """
    V = special.ndtri(kronecker_points(m, d))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    if m > 1 and d > 1:
        V = _riesz_descent(V, d - 1.0, steps)
    V.setflags(write=False)  # cached: shared by every caller
    return V


def _riesz_descent(V: np.ndarray, s: float, steps: int) -> np.ndarray:
    """Energy-decreasing projected-gradient steps for unit rows V (see ``riesz_directions``)."""

    def log_r2(V: np.ndarray) -> np.ndarray:
        r2 = np.maximum(2.0 - 2.0 * V @ V.T, 1e-300)
        np.fill_diagonal(r2, np.inf)
        return np.log(r2)

    def log_energy(lr2: np.ndarray) -> float:
        return float(special.logsumexp(-0.5 * s * lr2))

    lr2 = log_r2(V)
    energy, eta = log_energy(lr2), 0.5
    for _ in range(steps):
        a = -0.5 * (s + 2.0) * lr2
        w = np.exp(a - a.max())  # ∝ r^{−(s+2)}, the force weights
        F = w.sum(axis=1)[:, None] * V - w @ V  # Σ_j w_ij (v_i − v_j): away from neighbours
        F -= np.sum(F * V, axis=1, keepdims=True) * V
        top = np.max(np.linalg.norm(F, axis=1))
        if top == 0.0:
            break
        trial = V + eta * np.sqrt(np.exp(np.min(lr2))) * F / top
        trial /= np.linalg.norm(trial, axis=1, keepdims=True)
        lr2_trial = log_r2(trial)
        e_trial = log_energy(lr2_trial)
        if e_trial < energy:
            V, lr2, energy, eta = trial, lr2_trial, e_trial, min(2.0 * eta, 0.5)
        else:
            eta *= 0.5
    return V


@register_weights
class SSFStar(WeightsSampler):
    """SSF* — the simplified spherical structured features of docs/methods.md#qmc (Lyu 2017;
    Spectraformer Sec. 3.3): Riesz-energy directions computed once per (m, d), a Haar rotation per
    draw, χ_d radii F⁻¹((i + u)/m) permuted over rows; each row is exactly N(0, I_d), frames work.
    """

    name = "ssf"
    description = "SSF* (simplified): Riesz-energy sphere points, Haar-rotated, QMC chi radii"
    paper = "Spectraformer §3.2 (SSF, simplified as SSF*); Lyu 2017"
    rotation_invariant = True

    def __init__(self, steps: int = 300) -> None:
        if isinstance(steps, bool) or int(steps) != steps or steps < 0:
            raise ValueError(f"ssf steps must be a non-negative integer, got {steps!r}")
        self.steps = int(steps)

    def _radii(self, rng: np.random.Generator, d: int, m: int, draws: int) -> np.ndarray:
        t = (np.arange(m) + rng.random((draws, 1))) / m
        r = np.sqrt(2.0 * special.gammaincinv(d / 2.0, t))  # χ_d quantiles
        return rng.permuted(r, axis=1)

    def _sample_frame(self, rng, d: int, m: int, draws: int, k: int) -> Projections:
        r = self._radii(rng, d, m, draws)
        V = riesz_directions(m, d, self.steps)
        W = r[..., None] * (V @ haar_frames(rng, draws, d, k))
        return Projections(W, r**2, d)
