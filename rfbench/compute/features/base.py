"""The estimator contract (docs/architecture.md#estimator-contract): projections, log-space
features, components, couplings.

An estimator approximates K^(α)(x, y) = exp(α‖x‖²) SM(x, y) exp(α‖y‖²) by a bilinear product of
feature maps. Randomness (a ``Draw``) is separate from applying it. Every feature map is held in log
space as ``exp(log_scale[row]) * values[row]``: ``values`` are bounded by construction (each row is
shifted by its own maximum log-magnitude), and the shift is carried exactly in ``log_scale`` — no
additive epsilon, no clipping.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from rfbench.compute.checks import positive_int
from rfbench.compute.kernels import KERNELS, kernel_alpha, sq_norms

Side = Literal["query", "key"]


def declares(cls: type, method: str, base: type) -> bool:
    """Whether ``cls`` implements the optional capability ``method`` of ``base`` (overrides it).

    Capabilities are declared by implementing a method; this is how ``registry.describe`` reports
    one without building the estimator (docs/extending.md#capabilities).

    Parameters
    ----------
    cls : type
        A subclass of ``base`` (a component, or an estimator class registered as a hybrid).
    method : str
        The capability's method name on ``base``.
    base : type
        The class whose default means "lacks the capability".

    Returns
    -------
    bool
    """
    return isinstance(cls, type) and getattr(cls, method, None) is not getattr(base, method)


class EstimateRangeError(ArithmeticError):
    """An estimate is not representable in float64 (it is reported, never clipped)."""


@dataclass(frozen=True)
class Projections:
    """Random projections ω of one estimator, batched over independent draws.

    W:        (draws, M, k) — rows ω_i restricted to the first k input coordinates (k = d unless a
              rotation-invariant coupling was sampled in a k-dimensional frame).
    sq_norms: (draws, M) — the full squared norms ‖ω_i‖² (needed by GERF/DERF even in a frame).
    weights:  (M,) or (draws, M) quadrature weights a_i with K̂ = Σ_i a_i f1(ω_i, x) f2(ω_i, y);
              None means the Monte Carlo weights 1/M. Signed weights (SGQ) are allowed.
    d:        the dimension of the inputs the projections were drawn for.
    phase:    (draws, M) random phases b_i drawn with the ω_i (random-phase TrigRF, DERF Eqs. 4-5;
              rfbench.compute.features.trig_phase); None for every other map.
    """

    W: np.ndarray
    sq_norms: np.ndarray
    d: int
    weights: np.ndarray | None = None
    phase: np.ndarray | None = None

    @property
    def draws(self) -> int:
        return self.W.shape[0]

    @property
    def count(self) -> int:
        return self.W.shape[1]

    @property
    def frame(self) -> int:
        return self.W.shape[2]

    def project(self, X: np.ndarray) -> np.ndarray:
        """ωᵀx for every draw, row and projection: (draws, N, M). X is (N, k) or (draws, N, k)."""
        X = check_inputs(X, self.frame)
        # X Wᵀ: as fast as (W Xᵀ)ᵀ on one BLAS thread, and C-ordered, so the feature maps built
        # on it (stack, exp, reshape) run on contiguous memory instead of copying.
        return X @ np.swapaxes(self.W, -1, -2)

    def quadrature_weights(self) -> np.ndarray:
        """a_i broadcastable to (draws, M)."""
        if self.weights is None:
            return np.full((1, self.count), 1.0 / self.count)
        return np.atleast_2d(self.weights)

    def scaled(self, factor: float) -> Projections:
        """The projections of ω·factor (e.g. a bandwidth 1/σ)."""
        W, sq = self.W * factor, self.sq_norms * factor**2
        return Projections(W, sq, self.d, self.weights, self.phase)


def check_inputs(X: np.ndarray, k: int | None = None) -> np.ndarray:
    """Inputs as float arrays of shape (N, k) or (draws, N, k), finite, with the expected width."""
    X = np.asarray(X)
    if X.dtype != np.float32:  # float64 unless the caller chose float32 (kernel regression)
        X = X.astype(float, copy=False)
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim not in (2, 3):
        raise ValueError(f"inputs must have shape (N, d) or (draws, N, d), got {X.shape}")
    if k is not None and X.shape[-1] != k:
        raise ValueError(f"inputs have {X.shape[-1]} coordinates, projections have {k}")
    if not np.all(np.isfinite(X)):
        raise ValueError("inputs contain NaN or infinite values")
    return X


@dataclass(frozen=True)
class Features:
    """A batch of feature maps in log space: features = exp(log_scale)[..., None] * values.

    values:    (draws, N, F) real or complex, each row shifted so its largest magnitude is ≤ 1.
    log_scale: (draws, N) real.
    """

    values: np.ndarray
    log_scale: np.ndarray

    def dense(self) -> np.ndarray:
        """The features themselves, (draws, N, F) (may overflow where the kernel does)."""
        with np.errstate(over="ignore"):
            return self.values * np.exp(self.log_scale)[..., None]


@dataclass(frozen=True)
class Parts:
    """A feature map in a reduced-precision dtype as ``factor · exp(exponent)``, both (draws, N, F)
    in the dtype (:meth:`Estimator.dtype_parts`; the steps:
    :mod:`rfbench.compute.features.dtype_maps`).

    ``factor`` carries constants, signs and sin/cos; ``positive`` says every factor is ≥ 0.
    """

    exponent: np.ndarray
    factor: np.ndarray
    positive: bool


def concat_features(blocks: Sequence[Features]) -> Features:
    """Concatenate maps of the same rows along the feature axis, exactly (log scales aligned).

    A block whose row scale is -inf (an all-zero row) contributes zeros.
    """
    top = np.max(np.stack([f.log_scale for f in blocks]), axis=0)
    top = np.where(np.isfinite(top), top, 0.0)
    parts = [f.values * np.exp(f.log_scale - top)[..., None] for f in blocks]
    return Features(np.concatenate(parts, axis=-1), top)


def shifted_exp(log_magnitude: np.ndarray, factor: np.ndarray | None = None) -> Features:
    """Features factor·exp(log_magnitude) over axes (draws, N, M, l), shifted per row.

    ``factor`` (broadcastable, real or complex, |factor| ≤ 1) carries signs and phases, e.g.
    sin/cos for trigonometric features. Values are flattened to (draws, N, M*l) and each row's
    maximum log-magnitude is moved into ``log_scale``; a row whose features are all zero gets 0.
    """
    draws, n = log_magnitude.shape[:2]
    top = np.max(log_magnitude.reshape(draws, n, -1), axis=-1)
    top = np.where(np.isfinite(top), top, 0.0)
    values = log_magnitude - top[:, :, None, None]
    np.exp(values, out=values)
    if factor is not None:
        values = values * factor
    return Features(values.reshape(draws, n, -1), top)


def real_product(phi: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """Re(Φ Ψᵀ) over the last two axes; for complex maps as one real product
    [Re Φ, Im Φ][Re Ψ, −Im Ψ]ᵀ (half the flops of the complex product)."""
    if not (np.iscomplexobj(phi) or np.iscomplexobj(psi)):
        return phi @ np.swapaxes(psi, -1, -2)
    a = np.concatenate([phi.real, phi.imag], axis=-1)
    b = np.concatenate([psi.real, -psi.imag], axis=-1)
    return a @ np.swapaxes(b, -1, -2)


def bilinear_estimate(query: Features, key: Features) -> np.ndarray:
    """K̂ = Re(φ(x)ᵀψ(y)) (bilinear, no conjugation) for every draw and pair: (draws, N, N')."""
    return scaled_estimate(real_product(query.values, key.values), query.log_scale, key.log_scale)


#: row scales below this in magnitude are exponentiated separately (no overflow possible)
_SAFE_LOG = 300.0


def scaled_estimate(gram: np.ndarray, row_log: np.ndarray, col_log: np.ndarray) -> np.ndarray:
    """gram·exp(row_log[i] + col_log[j]), or EstimateRangeError if an estimate is not
    representable. Moderate scales (the usual case) multiply by e^row and e^col in turn: two
    passes over the pairs instead of an exponential of each."""
    with np.errstate(over="ignore", invalid="ignore"):
        safe = all(np.max(np.abs(a), initial=0.0) < _SAFE_LOG for a in (row_log, col_log))
        if safe:
            out = gram * np.exp(row_log)[..., :, None]
            out *= np.exp(col_log)[..., None, :]
        else:
            out = gram * np.exp(row_log[..., :, None] + col_log[..., None, :])
        finite = bool(np.isfinite(np.sum(out))) or bool(np.all(np.isfinite(out)))
    if not finite:
        bad = int(np.size(out) - np.count_nonzero(np.isfinite(out)))
        top = np.max(row_log[..., :, None] + col_log[..., None, :])
        raise EstimateRangeError(
            f"{bad} estimate(s) overflow float64 (largest log-scale {top:.1f}); "
            "the kernel value itself is out of range — rescale the inputs"
        )
    return out


class WeightsSampler(ABC):
    """A coupling of the projection vectors ω (rows marginally N(0, I_d) unless stated)."""

    name: str = ""
    description: str = ""
    paper: str = ""
    #: every row is marginally N(0, I_d), so every unbiased component stays unbiased
    marginally_gaussian: bool = True
    #: the law of W is invariant under W -> W U for orthogonal U (enables k-dimensional frames)
    rotation_invariant: bool = False
    #: the number of rows is fixed by d (SGQ-det), not by m
    fixed_count: bool = False
    #: rows are independent N(0, I_d) (iid): one row's law is the whole law, so an estimate from
    #: m rows is the mean of m independent single-row ones (importance sampling of the MSE)
    independent_rows: bool = False
    #: the rows carry importance weights p(ω)/(M q(ω)) against N(0, I_d) as quadrature weights,
    #: so every component unbiased under N(0, I_d) stays unbiased (``@fitted``)
    importance_weighted: bool = False
    #: the law of the rows is fitted to the data of ``sample(..., fit=(X, Y))`` (:meth:`fitted`)
    data_dependent: bool = False

    def fitted(self, X: np.ndarray, Y: np.ndarray) -> WeightsSampler:
        """The coupling fitted to queries X (N, d) and keys Y (N', d); itself unless
        :attr:`data_dependent`."""
        return self

    def fit_params(self) -> dict[str, Any]:
        """What a fitted coupling adds to a draw's parameters (e.g. for its closed form)."""
        return {}

    def draw_flops(self, count: float, d: int) -> float | None:
        """FLOPs of drawing ``count`` projections in R^d (one sample, exp, sin or square root counts
        1, a multiply-add 2; the model of rfbench.compute.experiments.cost.model), or None when it
        has no cost model: the cost map then gives it a skipped row saying so, never a guess.
        """
        return None

    def from_gaussian(self, G: np.ndarray, m: int) -> np.ndarray | None:
        """The first m rows of draws built from ``G``, or None when this coupling cannot be.

        The capability behind paired comparisons (pointwise ``paired``): estimators whose
        couplings build their rows from one shared Gaussian array are compared on common random
        numbers. Override where the coupling's law is a function of iid Gaussians.

        Parameters
        ----------
        G : ndarray of shape (draws, blocks · d, d)
            Independent N(0, 1) entries, at least m rows.
        m : int
            Rows wanted.

        Returns
        -------
        W : ndarray of shape (draws, m, d), or None
        """
        return None

    def __init__(self, **options: Any) -> None:
        if options:
            raise TypeError(f"weights {self.name!r} takes no options, got {sorted(options)}")

    def sample(
        self, rng: np.random.Generator, d: int, m: int, draws: int, frame: int | None = None
    ) -> Projections:
        """``draws`` independent draws of m projections in R^d (first ``frame`` coordinates)."""
        _check_sizes(d, m, draws)
        if frame is not None and frame < d:
            if not self.rotation_invariant:
                raise ValueError(f"weights {self.name!r} are not rotation invariant: no frames")
            if frame < 1:
                raise ValueError(f"frame must be at least 1, got {frame}")
            return self._sample_frame(rng, d, m, draws, frame)
        return self._sample(rng, d, m, draws)

    @abstractmethod
    def _sample(self, rng: np.random.Generator, d: int, m: int, draws: int) -> Projections: ...

    def _sample_frame(
        self, rng: np.random.Generator, d: int, m: int, draws: int, k: int
    ) -> Projections:
        raise NotImplementedError


def _check_sizes(d: int, m: int, draws: int) -> None:
    for label, value in (("d", d), ("m", m), ("draws", draws)):
        positive_int(label, value)


def full_projections(W: np.ndarray, weights: np.ndarray | None = None) -> Projections:
    """Projections from full rows W (draws, M, d)."""
    return Projections(W, sq_norms(W), W.shape[-1], weights)


class Component(ABC):
    """A feature function pair (f1, f2) for the softmax kernel K^(0) (DERF Def. 2.1).

    ``log_features`` returns per-projection features (before the quadrature weights) as
    log-magnitudes (and phases for complex features) of shape (draws, N, M, l), plus a per-row
    additive log term (draws, N) that does not depend on ω (e.g. -‖x‖²/2).
    """

    name: str = ""
    description: str = ""
    paper: str = ""
    outputs: int = 1  # l: features per projection
    #: complex features: each takes two real entries (the feature count counts it twice)
    complex_valued: bool = False
    positive: bool = True
    unbiased: bool = True
    data_dependent: bool = False
    rotation_invariant: bool = True  # uses ω only through ωᵀx and ‖ω‖²
    symmetric: bool = True  # f1 == f2
    #: draws a phase b_i ~ U[0, 2π] with each ω_i (``Projections.phase``: random-phase TrigRF)
    random_phase: bool = False
    #: kernels it estimates: the K^(α) family, or "angular" (1 - 2θ/π) for sign features
    kernels: tuple[str, ...] = KERNELS
    #: signs s of the tilts s·(x + y) of ω's law that an importance sampler of the MSE uses (the
    #: second moment grows like e^{s ωᵀ(x+y)}: positive (2,), hyperbolic (±2), bounded trig ());
    #: None: no importance sampler (the pointwise experiment then reports no is_* metrics)
    importance_tilts: tuple[float, ...] | None = None

    def __init__(self, **options: Any) -> None:
        if options:
            raise TypeError(f"component {self.name!r} takes no options, got {sorted(options)}")

    def fit(self, X: np.ndarray | None, Y: np.ndarray | None, d: int) -> dict[str, Any]:
        """Parameters fitted from data statistics (data-dependent components only)."""
        return {}

    def pair_log_estimate(
        self, proj: Projections, X: np.ndarray, Y: np.ndarray, params: dict[str, Any]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Optional shortcut for few pairs: (values, row_log, col_log), K^(0) estimates
        values·exp(row_log[i] + col_log[j]) of shape (draws, N, N'), when cheaper than the two
        feature maps (e.g. one query against a few keys); None: use the feature maps."""
        return None

    def fit_flops(self, n: float, d: int) -> float | None:
        """FLOPs of ``fit`` on n points per side in R^d (the model of
        rfbench.compute.experiments.cost.model: a multiply-add counts 2, an exp or square root 1).

        0 for a data-free component; a data-dependent component without a model returns None (the
        cost experiment then writes a skipped row saying so, never a guess).
        """
        return None if self.data_dependent else 0.0

    def feature_overhead_flops(self, d: int) -> float:
        """FLOPs per point (one side) of the map beyond the projections ωᵀx and one exp or sin/cos
        and scale per feature (cost model, rfbench.compute.experiments.cost.model): e.g. the dense
        DERF maps' B x and xᵀCx (DERF Thm 4.1). 0 unless overridden."""
        return 0.0

    def dtype_parts(
        self,
        proj: Projections,
        X: np.ndarray,
        side: Side,
        params: dict[str, Any],
        dt: Any,
        memo: dict,
    ) -> Parts:
        """The map f(ω_i, x)/√M computed in the dtype ``dt`` at every step, as ``factor ·
        exp(exponent)`` (the reduced-precision form, :mod:`rfbench.compute.features.dtype_maps`).

        Optional capability: a component that implements it is run by the precision experiment
        in float32/float16/bfloat16; one that does not gets a skipped row saying so.

        Parameters
        ----------
        proj : Projections
            Monte Carlo projections of one draw.
        X : ndarray of shape (N, d)
            Inputs, already cast to ``dt``.
        side : {"query", "key"}
            f1 or f2.
        params : dict
            Fitted parameters (data-dependent components).
        dt : numpy scalar type
            np.float64, np.float32, np.float16 or ml_dtypes.bfloat16.
        memo : dict
            One dict per draw and dtype: the query and key sides share rounded ω through it.

        Returns
        -------
        Parts
            exponent and factor of shape (draws, N, M·l) in ``dt``.
        """
        raise NotImplementedError(
            f"component {self.name!r} declares no reduced-precision form (Component.dtype_parts)"
        )

    @abstractmethod
    def log_terms(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]
    ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray]:
        """(log_magnitude (draws, N, M, l), factor or None, row_log (draws or 1, N)).

        The feature f(ω_i, x)_l = factor · exp(log_magnitude + row_log); ``factor`` holds signs or
        phases with |factor| ≤ 1 (None for positive features). A bounded feature (trig, sign)
        returns log_magnitude None: the factor is the feature, up to exp(row_log).
        """

    def features(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]
    ) -> Features:
        """Weighted features: √|a_i| f1(ω_i, x) (query), sign(a_i)√|a_i| f2(ω_i, y) (key)."""
        X = check_inputs(X, proj.frame)
        log_mag, factor, row_log = self.log_terms(proj, X, side, params)
        a = proj.quadrature_weights()[:, None, :, None]
        signed = side == "key" and np.any(a < 0)
        if log_mag is None:  # bounded features: no exponentials, no shift needed
            if proj.weights is None:  # 1/M: carried by the row scale, no pass over the values
                values = factor.reshape(factor.shape[0], factor.shape[1], -1)
                row_log = row_log - 0.5 * np.log(proj.count)
            else:
                weight = np.sqrt(np.abs(a)) * (np.sign(a) if signed else 1.0)
                values = (factor * weight).reshape(factor.shape[0], factor.shape[1], -1)
            return Features(values, np.broadcast_to(row_log, values.shape[:2]).astype(float))
        if proj.weights is None:  # Monte Carlo 1/M: a constant, carried by the row scale
            row_log = row_log - 0.5 * np.log(proj.count)
        else:
            with np.errstate(divide="ignore"):
                log_mag = log_mag + 0.5 * np.log(np.abs(a))
        if signed:
            factor = np.sign(a) if factor is None else factor * np.sign(a)
        out = shifted_exp(log_mag, factor)
        row_log = np.broadcast_to(row_log, out.log_scale.shape)
        return Features(out.values, out.log_scale + row_log)


@dataclass
class Draw:
    """One batch of randomness of an estimator (plus fitted parameters)."""

    projections: dict[str, Projections]
    params: dict[str, Any] = field(default_factory=dict)
    d: int = 0

    @property
    def draws(self) -> int:
        return next(iter(self.projections.values())).draws


class Estimator(ABC):
    """The public estimator API (docs/architecture.md#estimator-contract).

    The estimator answers for itself what experiments need to know about it: :attr:`kind`,
    :attr:`weights` (its coupling), :attr:`data_dependent`, :attr:`bipolar`,
    :attr:`features_per_projection`, :meth:`feature_width` and the optional capabilities
    :attr:`precision_form` and :attr:`projection_terms`. ``registry.describe(name)`` answers the
    same for a name before anything is built (listings, expanding a config).
    """

    name: str
    kernel: str
    m: int
    #: λ projections of a bipolar hybrid (HRF Eq. 12); None for every other estimator
    n: int | None = None
    #: "component" (a feature function on a coupling) or "hybrid" (any other construction)
    kind: Literal["component", "hybrid"] = "hybrid"
    #: the coupling its projections ω are drawn from (None: it draws no ω from a coupling, e.g.
    #: Nyström's landmarks)
    weights: WeightsSampler | None = None
    #: a draw is fitted to data: ``sample`` needs ``fit=(X, Y)`` (GERF/DERF, clusters, Nyström)
    data_dependent: bool = False
    #: λ̂·K̂⁺⁺ + (1 − λ̂)·K̂^trig with random λ (HRF Eq. 12), sized by (m, n)
    bipolar: bool = False

    @property
    def weights_name(self) -> str | None:
        """The coupling's name (``iid``, ``orf``, …; the ``weights`` column of result rows), or
        None for an estimator without a coupling."""
        return None if self.weights is None else self.weights.name

    def feature_width(self, draw: Draw, X: np.ndarray) -> int:
        """The feature count: real entries per point of the query map φ(x) of ``draw`` (a complex
        entry counts twice, as a real implementation stores it; e.g. 2m for trig's [sin, cos]).

        Parameters
        ----------
        draw : Draw
            A draw of this estimator (the count can depend on it: a quadrature rule fixes its
            own number of nodes).
        X : ndarray of shape (N ≥ 1, d) or (N, k) for a frame draw
            Inputs the draw accepts; only the first row is mapped.

        Returns
        -------
        int
        """
        values = self.query_log_features(draw, X[:1]).values
        return int(values.shape[-1] * (2 if np.iscomplexobj(values) else 1))

    @property
    def alpha(self) -> float:
        return kernel_alpha(self.kernel)

    @abstractmethod
    def sample(
        self,
        rng: np.random.Generator,
        d: int,
        draws: int = 1,
        fit: tuple[np.ndarray, np.ndarray] | None = None,
        frame: int | None = None,
    ) -> Draw: ...

    @abstractmethod
    def query_log_features(self, draw: Draw, X: np.ndarray) -> Features: ...

    @abstractmethod
    def key_log_features(self, draw: Draw, Y: np.ndarray) -> Features: ...

    def query_features(self, draw: Draw, X: np.ndarray) -> np.ndarray:
        """φ(x): (draws, N, F), real or complex."""
        return self.query_log_features(draw, X).dense()

    def key_features(self, draw: Draw, Y: np.ndarray) -> np.ndarray:
        """ψ(y): (draws, N', F)."""
        return self.key_log_features(draw, Y).dense()

    def estimate(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """K̂(x, y) = Re φ(x)ᵀψ(y) for every draw and pair: (draws, N, N')."""
        return bilinear_estimate(self.query_log_features(draw, X), self.key_log_features(draw, Y))

    @property
    def unbiased(self) -> bool:
        return False

    @property
    def rotation_invariant(self) -> bool:
        """Whether ``sample(..., frame=k)`` is allowed (inputs then live in R^k)."""
        return False

    @property
    def deterministic(self) -> bool:
        """Whether every draw is the same map (e.g. ``taylor2``): its MSE is its squared bias and
        its sample variance is zero, so tests compare the MSE exactly instead of in SEs."""
        return False

    # Optional capabilities (docs/extending.md#capabilities): experiments ask the estimator (or,
    # for a name, ``registry.describe(name)``) and write a skipped row, or refuse the config,
    # without them.

    #: features per projection ω_i of the per-projection terms (the l of their shape (…, M, l),
    #: a complex term counting once; None: no such terms)
    features_per_projection: int | None = None

    @property
    def projection_terms(self) -> bool:
        """Whether it has per-projection log terms (:meth:`projection_log_terms`)."""
        return declares(type(self), "projection_log_terms", Estimator)

    @property
    def precision_form(self) -> bool:
        """Whether it declares its reduced-precision form (:meth:`dtype_parts`)."""
        return declares(type(self), "dtype_parts", Estimator)

    def projection_log_terms(
        self, proj: Projections, X: np.ndarray, side: Side, params: dict[str, Any]
    ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray]:
        """The softmax map of one projection set as per-projection log terms (log-magnitude
        (draws, N, M, l) or None, factor or None, row term), before the quadrature weights and
        the kernel's e^{α‖x‖²} (see :meth:`Component.log_terms`; DERF Def. 2.1).

        Optional capability, reported by :attr:`projection_terms`; the
        kernel-regression classifier (SimRF §5.3, DERF §5.2) streams these terms in log space.
        """
        raise NotImplementedError(f"{self.name} has no per-projection log terms")

    def dtype_parts(self, draw: Draw, X: np.ndarray, side: Side, dt: Any, memo: dict) -> Parts:
        """The softmax feature map of ``draw`` at X (already in the dtype ``dt``) with every step
        in ``dt``, as ``factor · exp(exponent)`` (:mod:`rfbench.compute.features.dtype_maps`).

        Optional capability, reported by :attr:`precision_form`; the precision
        experiment builds its naive and stabilised maps from it (see
        :meth:`Component.dtype_parts` for the parameters).
        """
        raise NotImplementedError(f"{self.name} declares no reduced-precision form")

    @property
    def importance_tilts(self) -> tuple[float, ...] | None:
        """Signs of the importance sampler's tilts of a single-projection estimate
        (:attr:`Component.importance_tilts`), when the estimator's draw is m independent rows;
        None: no importance sampler (pointwise ``importance_draws`` adds no is_* rows)."""
        return None

    @property
    def pairing_weights(self) -> WeightsSampler | None:
        """The coupling whose rows are this estimator's whole draw (no fit, one projection set),
        so paired runs can build it from a shared Gaussian array with
        :meth:`WeightsSampler.from_gaussian` and :meth:`draw_from`; None: drawn unpaired."""
        return None

    def draw_from(self, proj: Projections) -> Draw:
        """The draw whose only randomness is ``proj`` (estimators with :attr:`pairing_weights`)."""
        raise NotImplementedError(f"{self.name} is not drawn from one projection set")

    def fit_flops(self, n: float, d: int) -> float | None:
        """FLOPs of the data fit of one draw on n points per side in R^d (cost model of
        rfbench.compute.experiments.cost.model); None: no model (the cost experiment skips the
        row)."""
        return None

    def feature_overhead_flops(self, d: int) -> float:
        """FLOPs per point of the map beyond the projections and one exp or sin/cos and scale per
        feature (cost model of rfbench.compute.experiments.cost.model); 0 unless overridden."""
        return 0.0

    def fit_state(
        self,
        rng: np.random.Generator,
        d: int,
        fit: tuple[np.ndarray, np.ndarray],
        causal: bool = False,
    ) -> dict[str, np.ndarray]:
        """The data fit alone, as float arrays (a learned map's weights), so that a caller can
        cache an expensive fit; ``sample`` is ``draw_from_state(fit_state(...))``. ``causal``:
        the fit is to causal attention (query i sees keys 0..i of ``fit``).

        Optional capability (a learned map, :mod:`rfbench.compute.features.learned`): callers ask
        ``declares(type(est), "fit_state", Estimator)``; a cache keys on :attr:`fit_code`.
        """
        raise NotImplementedError(f"{self.name} has no separate data fit")

    def draw_from_state(self, state: dict[str, np.ndarray], d: int, draws: int) -> Draw:
        """The draw of a fitted state from :meth:`fit_state` (the capability's other half)."""
        raise NotImplementedError(f"{self.name} has no separate data fit")

    @property
    def fit_code(self) -> str:
        """A digest of the code :meth:`fit_state` runs (and its options): a cache key part."""
        raise NotImplementedError(f"{self.name} has no separate data fit")


def kernel_row_log(alpha: float, X: np.ndarray) -> np.ndarray:
    """α‖x‖² per row: turns softmax features into K^(α) features (DERF Sec. 2)."""
    return alpha * sq_norms(np.asarray(X, dtype=float))
