"""Data-dependent dense-exponential RFs GERF (= OPRF, FAVOR++), ADERF, SDERF, SADERF for the softmax
kernel (DERF Sec. 3-4, Thm 4.1-4.3; docs/methods.md#derf-family).

``fit`` returns the mechanism's name, its native parameters and the general form ``derf``
(:class:`DerfParams`); features are positive and built in log space."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rfbench.compute.features.base import Component, Parts, Projections, Side
from rfbench.compute.features.maps import mm, project
from rfbench.compute.features.registry import register_component
from rfbench.compute.kernels import sq_norms

#: relative ridge ε/(mean eigenvalue of the second moments) for singular statistics (DERF;
#: docs/methods.md#derf-erratum-t9)
RIDGE = 1e-10
MECHANISMS = ("gerf", "aderf", "sderf", "saderf")


def a_star(phi: np.ndarray | float) -> np.ndarray:
    """Lemma A.1 (eq. 15), cancellation-free form of DERF Lemma A.1; docs/methods.md#lemma-a1:
    argmin over A < 1/8 of log(1-4A) - ½log(1-8A) + φ/(1-8A), i.e. -φ / (1 - 2φ + √((2φ+1)² + 8φ)),
    for φ ≥ 0."""
    phi = np.asarray(phi, dtype=float)
    if np.any(phi < 0):
        raise ValueError(f"Lemma A.1 needs φ >= 0, got min {np.min(phi)!r}")
    return -phi / (1.0 - 2.0 * phi + np.sqrt((2.0 * phi + 1.0) ** 2 + 8.0 * phi))


@dataclass(frozen=True)
class DerfParams:
    """A DERF (Theorem 4.1) with diagonal A = diag(a): f^(k) = D exp(ωᵀAω + ωᵀB_k x + xᵀC_k x).

    Valid when 8a < 1, B1ᵀ(I-4A)⁻¹B2 = I, C_k = -½B_kᵀ(I-4A)⁻¹B_k and D = det(I-4A)^{1/4}.
    """

    a: np.ndarray  # (d,) diagonal of A
    B1: np.ndarray  # (d, d)
    B2: np.ndarray
    C1: np.ndarray  # (d, d), symmetric
    C2: np.ndarray
    log_D: float

    def side(self, side: Side) -> tuple[np.ndarray, np.ndarray]:
        """(B^(k), C^(k)) for the query (k = 1) or key (k = 2) side."""
        if side == "query":
            return self.B1, self.C1
        if side == "key":
            return self.B2, self.C2
        raise ValueError(f"side must be 'query' or 'key', got {side!r}")


def _log_D(a: np.ndarray) -> float:
    """log det(I - 4A)^{1/4} for diagonal A."""
    return float(0.25 * np.sum(np.log1p(-4.0 * a)))


def _check_A(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(8.0 * a >= 1.0):
        raise ValueError("DERF needs 8A < I (Theorem 4.1), got A with entries >= 1/8")
    return a


# Builders: native parameters -> the params dict (used by fit, and to force special cases).


def gerf_params(A: float, d: int) -> dict[str, Any]:
    """GERF (eq. 6, DERF Eqs. 6-7; docs/methods.md#gerf; exponent -‖x‖²/2 per DERF;
    docs/methods.md#derf-erratum-t2): A·I, B = √(1-4A)·I, C = -½I."""
    a = _check_A(np.full(d, float(A)))
    b = np.sqrt(1.0 - 4.0 * A) * np.eye(d)
    C = -0.5 * np.eye(d)
    return {"mechanism": "gerf", "A": float(A), "derf": DerfParams(a, b, b, C, C, _log_D(a))}


def saderf_params(A: float, psi: np.ndarray) -> dict[str, Any]:
    """SADERF (DERF Sec. 4.3; docs/methods.md#saderf): GERF on Ψx and Ψ⁻¹y; B1 = bΨ, B2 = bΨ⁻¹,
    C1 = -½Ψ², C2 = -½Ψ⁻²."""
    psi = np.asarray(psi, dtype=float)
    if np.any(~np.isfinite(psi)) or np.any(psi <= 0):
        raise ValueError("SADERF needs a positive finite diagonal Ψ")
    a = _check_A(np.full(psi.size, float(A)))
    b = np.sqrt(1.0 - 4.0 * A)
    derf = DerfParams(
        a,
        np.diag(b * psi),
        np.diag(b / psi),
        np.diag(-0.5 * psi**2),
        np.diag(-0.5 / psi**2),
        _log_D(a),
    )
    return {"mechanism": "saderf", "A": float(A), "psi": psi, "derf": derf}


def aderf_params(A: float, T1: np.ndarray, T2: np.ndarray | None = None) -> dict[str, Any]:
    """ADERF (Theorem 4.2, DERF Thm 4.2; docs/methods.md#aderf) with B1 = √(1-4A)·T1 and
    B2 = √(1-4A)·T2, T2 = T1^{-T}.

    In the theorem T1 = Σ^{1/2}UᵀΛ1^{-1/2}Q1ᵀ and T2 = Σ^{-1/2}UᵀΛ1^{1/2}Q1ᵀ; then
    C_k = -½T_kᵀT_k, and F = T1ᵀT1 (F⁻¹ = T2ᵀT2) is the geometric mean of M1⁻¹ and M2.
    """
    T1 = np.asarray(T1, dtype=float)
    T2 = np.linalg.inv(T1).T if T2 is None else np.asarray(T2, dtype=float)
    d = T1.shape[0]
    a = _check_A(np.full(d, float(A)))
    b = np.sqrt(1.0 - 4.0 * A)
    derf = DerfParams(a, b * T1, b * T2, -0.5 * T1.T @ T1, -0.5 * T2.T @ T2, _log_D(a))
    return {"mechanism": "aderf", "A": float(A), "T1": T1, "T2": T2, "derf": derf}


def sderf_params(a: np.ndarray, Q: np.ndarray) -> dict[str, Any]:
    """SDERF (Theorem 4.3, DERF Thm 4.3; docs/methods.md#sderf): A = diag(a), B = (I-4A)^{1/2}Qᵀ,
    C = -½I (Q orthogonal)."""
    a = _check_A(a)
    Q = np.asarray(Q, dtype=float)
    B = np.sqrt(1.0 - 4.0 * a)[:, None] * Q.T
    C = -0.5 * np.eye(a.size)
    return {"mechanism": "sderf", "a": a, "Q": Q, "derf": DerfParams(a, B, B, C, C, _log_D(a))}


# Closed-form fits of the shifted log-variance (eq. 8) from the sets X (queries) and Y (keys).


def _check_sets(X: np.ndarray, Y: np.ndarray, d: int, exact: bool = True) -> None:
    for label, S in (("X", X), ("Y", Y)):
        if S.ndim != 2 or len(S) == 0:
            raise ValueError(f"{label} must be a non-empty (N, d) array, got shape {S.shape}")
        if (S.shape[1] != d) if exact else (S.shape[1] > d):
            raise ValueError(f"{label} has {S.shape[1]} coordinates, expected d = {d}")


def ridge_eps(trace1: float, trace2: float, d: int, ridge: float | None = None) -> float:
    """ε = ridge·(mean eigenvalue of M1, M2), or an absolute ridge if the data are all zero (T9)."""
    rel = RIDGE if ridge is None else float(ridge)
    if rel < 0:
        raise ValueError(f"ridge must be >= 0, got {ridge!r}")
    scale = (trace1 + trace2) / (2 * d)
    return rel * scale if scale > 0 else rel


def fit_gerf(X: np.ndarray, Y: np.ndarray, d: int) -> dict[str, Any]:
    """OPRF/FAVOR++ (DERF Eqs. 6-7; docs/methods.md#gerf): A = A⋆(S̄/d), S̄ = mean_ij ‖x_i + y_j‖²
    (O(Ld)).

    X and Y may be given in a k ≤ d dimensional frame (S̄ is rotation invariant); d is the true d.
    """
    _check_sets(X, Y, d, exact=False)
    S = sq_norms(X).mean() + sq_norms(Y).mean() + 2.0 * X.mean(0) @ Y.mean(0)
    return gerf_params(float(a_star(max(S, 0.0) / d)), d)


def fit_saderf(X: np.ndarray, Y: np.ndarray, d: int, ridge: float | None = None) -> dict[str, Any]:
    """SADERF (DERF Sec. 4.3; docs/methods.md#saderf, eq. 13 with means): Ψ_l = ((mean
    y_l² + ε)/(mean x_l² + ε))^{1/4}, then the GERF A fitted on {Ψx} and {Ψ⁻¹y}."""
    _check_sets(X, Y, d)
    mx2, my2 = np.mean(X**2, axis=0), np.mean(Y**2, axis=0)
    eps = ridge_eps(mx2.sum(), my2.sum(), d, ridge)
    psi = ((my2 + eps) / (mx2 + eps)) ** 0.25
    return saderf_params(fit_gerf(X * psi, Y / psi, d)["A"], psi)


def fit_aderf(X: np.ndarray, Y: np.ndarray, d: int, ridge: float | None = None) -> dict[str, Any]:
    """ADERF (Theorem 4.2, DERF Thm 4.2; docs/methods.md#aderf): eig of M1, M2 (+εI, T9), SVD,
    φ = 2(d⁻¹ΣΣ_ll + μ3) (T4)."""
    _check_sets(X, Y, d)
    M1, M2 = X.T @ X / len(X), Y.T @ Y / len(Y)
    eps = ridge_eps(np.trace(M1), np.trace(M2), d, ridge)
    l1, Q1 = np.linalg.eigh(M1 + eps * np.eye(d))
    l2, Q2 = np.linalg.eigh(M2 + eps * np.eye(d))
    r1, r2 = np.sqrt(np.maximum(l1, eps)), np.sqrt(np.maximum(l2, eps))
    U, s, _ = np.linalg.svd(r1[:, None] * (Q1.T @ Q2) * r2[None, :])
    s = np.maximum(s, np.finfo(float).tiny)
    mu3 = X.mean(0) @ Y.mean(0) / d
    A = float(a_star(max(2.0 * s.mean() + 2.0 * mu3, 0.0)))
    T1 = np.sqrt(s)[:, None] * (U.T / r1[None, :]) @ Q1.T
    T2 = (1.0 / np.sqrt(s))[:, None] * (U.T * r1[None, :]) @ Q1.T
    return aderf_params(A, T1, T2)


def fit_sderf(X: np.ndarray, Y: np.ndarray, d: int) -> dict[str, Any]:
    """SDERF (Theorem 4.3, DERF Thm 4.3; docs/methods.md#sderf): N = mean_ij (x+y)(x+y)ᵀ = QΛQᵀ,
    A_ll = A⋆(Λ_ll)."""
    _check_sets(X, Y, d)
    mx, my = X.mean(0), Y.mean(0)
    N = X.T @ X / len(X) + Y.T @ Y / len(Y) + np.outer(mx, my) + np.outer(my, mx)
    lam, Q = np.linalg.eigh(0.5 * (N + N.T))
    return sderf_params(a_star(np.clip(lam, 0.0, None)), Q)


# Components.


class _DenseExponential(Component):
    """A fitted DERF; features from the full ω (ωᵀAω and ωᵀB^(k)x need every coordinate)."""

    paper = "DERF Thm 4.1"
    data_dependent = True
    rotation_invariant = False

    ridge: float | None = None  # relative ridge of singular statistics (:class:`_Ridged`)
    #: the closed-form fit of the mechanism: fitter(X, Y, d) or, with a ridge, (X, Y, d, ridge)
    fitter: Any = None

    def fit(self, X: np.ndarray | None, Y: np.ndarray | None, d: int) -> dict[str, Any]:
        X, Y = np.asarray(X, float), np.asarray(Y, float)
        return self.fitter(X, Y, d) if self.ridge is None else self.fitter(X, Y, d, self.ridge)

    def params(self, params: dict[str, Any]) -> DerfParams:
        if params.get("mechanism") != self.name or "derf" not in params:
            got = params.get("mechanism") if params else "nothing (was sample() given fit=?)"
            raise ValueError(f"{self.name} features need {self.name} parameters, got {got}")
        return params["derf"]

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        derf = self.params(params)
        if proj.frame != proj.d:
            raise ValueError(f"{self.name} needs full projections, got a {proj.frame}-d frame")
        B, C = derf.side(side)
        dtype = X.dtype  # float64, or float32 if the caller chose it (kernel regression)
        quad = np.einsum("bmd,d,bmd->bm", proj.W, derf.a, proj.W).astype(dtype, copy=False)
        log_mag = proj.project(X @ B.T.astype(dtype, copy=False))
        log_mag += quad[:, None, :]
        # xᵀCx through the BLAS: a three-operand einsum is 13× slower at n = 4000, d = 40
        row_log = derf.log_D + np.sum((X @ C) * X, axis=-1)
        return log_mag[..., None], None, row_log

    def dtype_parts(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any], dt, memo: dict
    ) -> Parts:
        """D exp(ωᵀAω + ωᵀBx + xᵀCx)/√M (DERF Thm 4.1) with the fitted A, B, C, log D cast to the
        dtype; ωᵀAω (A diagonal) is computed once per draw and shared by both sides."""
        derf = self.params(params)
        B, C = derf.side(side)
        u = project(proj, mm(X, B.T.astype(dt)), dt, memo)
        ones = np.ones((proj.frame, 1), dt)
        if (id(proj), "quad") not in memo:
            W = proj.W.astype(dt)
            memo[(id(proj), "quad")] = mm(W * W * derf.a.astype(dt), ones)[..., 0]
        quad = memo[(id(proj), "quad")]
        xcx = mm((mm(X, C.astype(dt)) * X), ones)[..., 0]
        row = xcx + dt(derf.log_D)
        e = u + quad[:, None, :] + row[..., None]
        return Parts(e, np.full(e.shape, dt(1.0 / np.sqrt(proj.count)), dt), True)

    def fit_flops(self, n: float, d: int) -> float:
        """Second moments of both sets and eigendecompositions: 4nd² + 10d³ (DERF Thms 4.2-4.3;
        rfbench.compute.experiments.cost.model)."""
        return 4 * n * d**2 + 10 * d**3

    def feature_overhead_flops(self, d: int) -> float:
        """B x and xᵀCx per point: 2d² + 2d² (DERF Thm 4.1)."""
        return 4 * d**2


@register_component
class GERF(_DenseExponential):
    """GERF with the optimal scalar A = OPRF / FAVOR++ (DERF eq. 6, Sec. 3.1; s = +1, real)."""

    name = "gerf"
    description = "generalised exponential RFs with data-optimal A (OPRF, FAVOR++)"
    paper = "DERF eq. 6-7, Sec. 3.1"
    rotation_invariant = True
    fitter = staticmethod(fit_gerf)

    def log_terms(self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]):
        derf, A = self.params(params), params["A"]
        log_mag = proj.project(X)  # a new array: updated in place
        log_mag *= np.sqrt(1.0 - 4.0 * A)
        log_mag += A * proj.sq_norms[:, None, :]
        return log_mag[..., None], None, derf.log_D - 0.5 * sq_norms(X)

    def fit_flops(self, n: float, d: int) -> float:
        """Set means and squared norms: 4nd (DERF Eqs. 6-7;
        rfbench.compute.experiments.cost.model)."""
        return 4 * n * d

    def feature_overhead_flops(self, d: int) -> float:
        """None beyond the projections: B and C are multiples of I (DERF eq. 6)."""
        return 0


class _Ridged(_DenseExponential):
    """An asymmetric mechanism whose fit takes the option ``ridge`` (ADERF, SADERF)."""

    symmetric = False

    def __init__(self, ridge: float | None = None) -> None:
        self.ridge = ridge


@register_component
class ADERF(_Ridged):
    """Asymmetric DERF (DERF Theorem 4.2): scalar A, dense B^(1) ≠ B^(2), C^(k)."""

    name = "aderf"
    description = "asymmetric dense-exponential RFs (scalar A, dense B1 != B2)"
    paper = "DERF Thm 4.2"
    fitter = staticmethod(fit_aderf)


@register_component
class SDERF(_DenseExponential):
    """Symmetric DERF (DERF Theorem 4.3): diagonal A, B^(1) = B^(2) = B, C = -½I (FAVOR#)."""

    name = "sderf"
    description = "symmetric dense-exponential RFs (diagonal A, one eig; FAVOR#)"
    paper = "DERF Thm 4.3"
    fitter = staticmethod(fit_sderf)


@register_component
class SADERF(_Ridged):
    """Simplified ADERF (DERF Sec. 4.3, eq. 13): GERF on Ψx and Ψ⁻¹y, Ψ diagonal, O(Ld)."""

    name = "saderf"
    description = "simplified asymmetric DERF: GERF on diag-rescaled inputs (FAVOR# GLUE)"
    paper = "DERF Sec. 4.3, eq. 12-13"
    fitter = staticmethod(fit_saderf)
