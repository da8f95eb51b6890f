"""Bipolar hybrids λ̂·K̂⁺⁺ + (1 − λ̂)·K̂^trig with λ̂ = a + c·g(x)ᵀg(y) (HRF Eq. 9–12, Sec. 2.4,
Lemma 2.3, App. F; CSE eq. 11): ``angular-hybrid`` (alias ``cse``: variant shared-all) and
``gaussian-hybrid`` (docs/methods.md#hybrids).

``estimate`` combines Gram matrices; the log-feature maps are Lemma 2.3's real asymmetric maps,
which give the same numbers."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import numpy as np

from rfbench.compute.checks import positive_int
from rfbench.compute.features.base import (
    Component,
    Draw,
    FamilyEstimator,
    Features,
    Fit,
    Parts,
    Projections,
    Rng,
    Side,
    WeightsSampler,
    bilinear_estimate,
    check_inputs,
    concat_features,
)
from rfbench.compute.features.components import Hyperbolic, Sign, Trig
from rfbench.compute.features.maps import project
from rfbench.compute.features.registry import (
    HybridEntry,
    make_weights,
    register_alias,
    register_hybrid,
)

VARIANTS = ("independent", "shared-base", "shared-all")
DEFAULT_N = 8  # λ projections (HRF App. I; docs/methods.md#hrf-flop-matching: m·n = M with n = 8)


class _Fourier(Trig):
    """[sin τᵀu, cos τᵀu] without e^{‖u‖²/2}: (1/n)Σ cos(τᵀ(x-y)) estimates e^{-‖x-y‖²/2}."""

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        log_mag, factor, _ = super().log_terms(proj, X, side, params)
        return log_mag, factor, np.zeros(1)

    dtype_parts = Component.dtype_parts  # not Trig's: no e^{‖u‖²/2} here
    importance_tilts = None


def _scale(f: Features, coef: float) -> Features:
    """coef·f, exactly: log|coef| joins the row scale, the sign the values."""
    return Features(np.sign(coef) * f.values, f.log_scale + np.log(abs(coef)))


def _outer(g: Features, f: Features) -> Features:
    """The vectorised outer product g ⊗ f of two maps (HRF Lemma 2.3): log scales add."""
    v = g.values[..., :, None] * f.values[..., None, :]
    return Features(v.reshape(*v.shape[:-2], -1), g.log_scale + f.log_scale)


def _first_rows(proj: Projections, n: int) -> Projections:
    """The first n projections (CSE variant S: τ_i = ω_i), quadrature weights renormalised."""
    w = proj.weights
    if w is not None and n < proj.count:
        w = w[..., :n] / np.sum(w[..., :n], axis=-1, keepdims=True)
    return Projections(proj.W[:, :n], proj.sq_norms[:, :n], proj.d, w)


class HybridBase(FamilyEstimator):
    """Shared checks: kernel, m, the coupling and the kernel row factor e^{α‖x‖²}."""

    m_counts = "projections per base estimator"

    def __init__(self, kernel: str, m: int, weights: WeightsSampler | None) -> None:
        super().__init__(kernel, m)
        self.weights = make_weights("iid") if weights is None else weights
        self.name = f"{self.family}@{self.weights.name}"

    def fit_flops(self, n: float, d: int) -> float | None:
        """No fit: 0 (data-dependent hybrids override it)."""
        return 0.0


class BipolarHybrid(HybridBase):
    """λ̂·ŜM⁺⁺ + (1 − λ̂)·ŜM^trig with λ̂ = a + c·g(x)ᵀg(y) independent of the ω's (HRF Eq. 12)."""

    variants: tuple[str, ...] = VARIANTS[:2]
    bases = (Hyperbolic(), Trig())
    bipolar = True

    @property
    def rotation_invariant(self) -> bool:
        """Every piece uses ω, τ only through projections: frames work if the coupling allows."""
        return self.weights.rotation_invariant

    def __init__(
        self,
        kernel: str = "softmax",
        m: int = 128,
        n: int | None = None,
        weights: WeightsSampler | None = None,
        variant: str = "independent",
    ) -> None:
        super().__init__(kernel, m, weights)
        if variant not in self.variants:
            raise ValueError(f"variant must be one of {', '.join(self.variants)}, got {variant!r}")
        self.variant = variant
        default = self.m if variant == "shared-all" else DEFAULT_N
        self.n = positive_int("n (λ projections)", default if n is None else n)
        if variant == "shared-all" and self.n > self.m:
            raise ValueError(f"variant shared-all reuses ω as τ and needs n <= m, got n = {n}")

    @property
    def unbiased(self) -> bool:
        return self.variant != "shared-all" and self.weights.marginally_gaussian

    @abstractmethod
    def coefficients(self) -> tuple[float, float]:
        """(a, c) of λ̂ = a + c·g(x)ᵀg(y)."""

    @abstractmethod
    def lambda_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        """g(u) from the τ projections."""

    def sample(
        self, rng: Rng, d: int, draws: int = 1, fit: Fit | None = None, frame: int | None = None
    ) -> Draw:
        def one(count: int) -> Projections:
            return self.weights.sample(rng, d, count, draws, frame=frame)

        pos = one(self.m)
        trig = one(self.m) if self.variant == "independent" else pos
        tau = _first_rows(pos, self.n) if self.variant == "shared-all" else one(self.n)
        return Draw({"omega_pos": pos, "omega_trig": trig, "tau": tau}, {}, d)

    def base_features(self, draw: Draw, X: np.ndarray, side: Side) -> tuple[Features, Features]:
        """(φ⁺⁺(u), φ^trig(u)), each times e^{α‖u‖²} for the kernel K^(α)."""
        X = check_inputs(X)
        keys = ("omega_pos", "omega_trig")
        return tuple(  # type: ignore[return-value]
            self.with_kernel(comp.features(draw.projections[k], X, side, {}), X)
            for comp, k in zip(self.bases, keys, strict=True)
        )

    def lambda_hat(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """λ̂(x, y) for every draw and pair: (draws, N, N')."""
        a, c = self.coefficients()
        gram = bilinear_estimate(
            self.lambda_features(draw, X, "query"), self.lambda_features(draw, Y, "key")
        )
        return a + c * gram

    def estimate(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """The direct form λ̂·K̂⁺⁺ + (1 − λ̂)·K̂^trig (HRF Eq. 12)."""
        lam = self.lambda_hat(draw, X, Y)
        (pos_x, trig_x), (pos_y, trig_y) = (
            self.base_features(draw, X, "query"),
            self.base_features(draw, Y, "key"),
        )
        return lam * bilinear_estimate(pos_x, pos_y) + (1 - lam) * bilinear_estimate(trig_x, trig_y)

    def log_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        """Lemma 2.3, real asymmetric: query [√|a|φ₁; √|c| g⊗φ₁; √|1-a|φ₂; √|c| g⊗φ₂]; the key
        side carries the signs of (a, c, 1 - a, -c). Blocks with a zero coefficient are dropped,
        so the angular map has 4m(n+1) entries (HRF Sec. 2.4, Eq. 19, Lemma 3.2;
        docs/methods.md#hrf-angular-hybrid)."""
        a, c = self.coefficients()
        g = self.lambda_features(draw, X, side)
        f1, f2 = self.base_features(draw, X, side)
        maps = (f1, _outer(g, f1), f2, _outer(g, f2))
        blocks = [
            _scale(f, np.sqrt(abs(k)) * (np.sign(k) if side == "key" else 1.0))
            for f, k in zip(maps, (a, c, 1.0 - a, -c), strict=True)
            if k != 0
        ]
        return concat_features(blocks)


class AngularHybrid(BipolarHybrid):
    """λ̂ = ½ - (1/2n)Σ_j sgn(τ_jᵀx)sgn(τ_jᵀy) ~ Binomial(n, θ/π)/n (HRF Eq. 19, 43; CSE 8–11)."""

    family = "angular-hybrid"
    paper = "HRF Sec. 2.4 Eq. 12, 19; CSE eq. 11"
    description = "λ̂ = θ/π (sign features) mixing SM++ and trig; variants I, II, S (shared-all)"
    variants = VARIANTS
    sign = Sign()

    def coefficients(self) -> tuple[float, float]:
        return 0.5, -0.5

    def lambda_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        return self.sign.features(draw.projections["tau"], check_inputs(X), side, {})

    def dtype_parts(self, draw: Draw, X: np.ndarray, side: Side, dt, memo: dict) -> Parts:
        """HRF Lemma 2.3 in the dtype: [√a φ⁺⁺; √|c| g⊗φ⁺⁺; √|1−a| φᵗʳⁱᵍ; √|c| g⊗φᵗʳⁱᵍ] with
        g = n^{-1/2} sgn(τᵀx) (HRF Eq. 19); the key side carries the signs of (a, c, 1−a, −c).
        The bases' own reduced-precision forms give φ⁺⁺ and φᵗʳⁱᵍ."""
        if self.alpha != 0.0:
            raise ValueError(f"{self.name}: the reduced-precision form is of the softmax kernel")
        a, c = self.coefficients()
        keys = ("omega_pos", "omega_trig")
        pos, trig = (
            base.dtype_parts(draw.projections[k], X, side, {}, dt, memo)
            for base, k in zip(self.bases, keys, strict=True)
        )
        tau = draw.projections["tau"]
        g = np.where(project(tau, X, dt, memo) >= 0, dt(1.0), dt(-1.0)) * dt(
            1.0 / np.sqrt(tau.count)
        )
        exps, factors = [], []
        for base, coefs in ((pos, (a, c)), (trig, (1.0 - a, -c))):
            for k, outer in zip(coefs, (False, True), strict=True):
                if k == 0:
                    continue
                s = dt(np.sqrt(abs(k)) * (np.sign(k) if side == "key" else 1.0))
                e, f = base.exponent, base.factor * s
                if outer:
                    e = np.broadcast_to(e[..., None, :], (*g.shape, e.shape[-1]))
                    f = g[..., :, None] * f[..., None, :]
                exps.append(e.reshape(*e.shape[:2], -1))
                factors.append(f.reshape(*f.shape[:2], -1))
        return Parts(np.concatenate(exps, -1), np.concatenate(factors, -1), False)


class GaussianHybrid(BipolarHybrid):
    """λ̂ = 1/ρ - (1/(nρ))Σ_j cos(σ τ_jᵀ(x - y)) (HRF App. F Eq. 69; ρ := 1 if not normalized).

    ρ = 1 - exp(-2σ²r²) with a fixed ``radius`` r (App. F assumes ‖x‖ = ‖y‖ = r; a constant ρ keeps
    λ̂ linearisable, and unbiasedness holds for any ρ). Default σ = 1 (the LM code's value).
    """

    family = "gaussian-hybrid"
    paper = "HRF Sec. 2.4 Eq. 20, App. F"
    description = "normalised bipolar Gaussian hybrid (sigma, radius; normalized=False: LM code)"
    fourier = _Fourier()

    def __init__(
        self,
        kernel: str = "softmax",
        m: int = 128,
        n: int | None = None,
        weights: WeightsSampler | None = None,
        variant: str = "independent",
        sigma: float = 1.0,
        normalized: bool = True,
        radius: float = 1.0,
    ) -> None:
        super().__init__(kernel, m, n, weights, variant)
        if not (np.isfinite(sigma) and sigma > 0 and np.isfinite(radius) and radius > 0):
            raise ValueError(f"sigma and radius must be positive, got {sigma!r}, {radius!r}")
        self.sigma, self.normalized, self.radius = float(sigma), bool(normalized), float(radius)
        self.rho = float(-np.expm1(-2 * self.sigma**2 * self.radius**2)) if normalized else 1.0

    def coefficients(self) -> tuple[float, float]:
        return 1.0 / self.rho, -1.0 / self.rho

    def lambda_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        tau = draw.projections["tau"].scaled(self.sigma)
        return self.fourier.features(tau, check_inputs(X), side, {})


for _cls in (AngularHybrid, GaussianHybrid):
    register_hybrid(HybridEntry.of(_cls))
# '@iid' in the target: registry.list_estimators looks alias targets up among full names.
register_alias("cse", "angular-hybrid@iid", variant="shared-all")
