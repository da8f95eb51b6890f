"""The estimator contract (docs/architecture.md#estimator-contract): an estimator approximates
K^(α)(x, y) = exp(α‖x‖²) SM(x, y) exp(α‖y‖²) by a bilinear product of feature maps held in log
space; its randomness (a ``Draw``) is separate from applying it. The pieces it is built from live in
:mod:`.projections`, :mod:`.maps` and :mod:`.component` and are importable from here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from rfbench.compute.checks import positive_int
from rfbench.compute.features.component import Component
from rfbench.compute.features.maps import (
    EstimateRangeError,
    Features,
    Parts,
    Side,
    bilinear_estimate,
    concat_features,
    kernel_row_log,
    real_product,
    scaled_estimate,
    shifted_exp,
)
from rfbench.compute.features.projections import (
    Projections,
    WeightsSampler,
    check_inputs,
    full_projections,
)
from rfbench.compute.kernels import check_kernel, kernel_alpha

#: the data a data-dependent draw is fitted to: (queries X, keys Y)
Fit = tuple[np.ndarray, np.ndarray]
Rng = np.random.Generator
#: a block of an estimate: (rows of X, columns of Y, query map, key map)
#: (:meth:`Estimator.estimate_blocks`)
Block = tuple[slice | np.ndarray, slice | np.ndarray, Features, Features]

__all__ = [
    "Block",
    "Component",
    "Draw",
    "EstimateRangeError",
    "Estimator",
    "FamilyEstimator",
    "Features",
    "Fit",
    "Parts",
    "Projections",
    "Rng",
    "Side",
    "WeightsSampler",
    "bilinear_estimate",
    "check_inputs",
    "concat_features",
    "declares",
    "full_projections",
    "kernel_row_log",
    "real_product",
    "scaled_estimate",
    "shifted_exp",
    "whole_maps",
]


def declares(cls: type, method: str, base: type) -> bool:
    """Whether ``cls`` (a subclass of ``base``) implements the optional capability ``method``,
    i.e. overrides it (docs/extending.md#capabilities)."""
    return isinstance(cls, type) and getattr(cls, method, None) is not getattr(base, method)


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
    """The public estimator API (docs/architecture.md#estimator-contract); it answers for itself
    what experiments need to know about it (of a name: ``registry.describe(name).estimator``)."""

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
    #: λ̂·K̂⁺⁺ + (1 − λ̂)·K̂^trig with random λ (HRF Eq. 12), sized by (m, n); a class-level fact
    #: (``registry.estimator_class(name).bipolar`` sizes an estimator before building it)
    bipolar: bool = False
    #: the values its ``variant`` option takes (a bipolar hybrid's sharing, HRF Sec. 2.4); ()
    variants: tuple[str, ...] = ()

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
        self, rng: Rng, d: int, draws: int = 1, fit: Fit | None = None, frame: int | None = None
    ) -> Draw: ...

    def log_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        """The query map φ(x) or the key map ψ(y) of ``draw`` in log space: (draws, N, F).
        Implement it, or :meth:`query_log_features` and :meth:`key_log_features`."""
        raise NotImplementedError(f"{self.name} implements no feature map")

    def query_log_features(self, draw: Draw, X: np.ndarray) -> Features:
        return self.log_features(draw, X, "query")

    def key_log_features(self, draw: Draw, Y: np.ndarray) -> Features:
        return self.log_features(draw, Y, "key")

    def with_kernel(self, f: Features, X: np.ndarray) -> Features:
        """Softmax features ``f`` of the rows X times e^{α‖x‖²}: features of K^(α)."""
        if self.alpha == 0.0:
            return f
        return Features(f.values, f.log_scale + kernel_row_log(self.alpha, X))

    def query_features(self, draw: Draw, X: np.ndarray) -> np.ndarray:
        """φ(x): (draws, N, F), real or complex."""
        return self.query_log_features(draw, X).dense()

    def key_features(self, draw: Draw, Y: np.ndarray) -> np.ndarray:
        """ψ(y): (draws, N', F)."""
        return self.key_log_features(draw, Y).dense()

    def estimate(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """K̂(x, y) = Re φ(x)ᵀψ(y) for every draw and pair: (draws, N, N')."""
        return bilinear_estimate(self.query_log_features(draw, X), self.key_log_features(draw, Y))

    def estimate_blocks(self, draw: Draw, X: np.ndarray, Y: np.ndarray) -> list[Block] | None:
        """:meth:`estimate` as blocks (rows of X, columns of Y, query map, key map) that
        partition the pairs, block (rows, columns) of K̂ being ``bilinear_estimate`` of its maps,
        computed as :meth:`estimate` computes it; None when :meth:`estimate` is formed otherwise
        (docs/extending.md#capabilities). Default: the whole maps, one block, unless
        :meth:`estimate` is overridden."""
        if declares(type(self), "estimate", Estimator):
            return None
        return whole_maps(self, draw, X, Y)

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

    # Optional capabilities (docs/extending.md#capabilities): without one, an experiment writes
    # a skipped row or refuses the config.

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
        """The softmax map of one projection set as per-projection log terms, before the
        quadrature weights and e^{α‖x‖²} (:meth:`Component.log_terms`; DERF Def. 2.1): streamed
        by the kernel-regression classifier (SimRF §5.3, DERF §5.2)."""
        raise NotImplementedError(f"{self.name} has no per-projection log terms")

    def dtype_parts(self, draw: Draw, X: np.ndarray, side: Side, dt: Any, memo: dict) -> Parts:
        """The softmax feature map of ``draw`` at X with every step in the dtype ``dt``, for the
        precision experiment (parameters: :meth:`Component.dtype_parts`)."""
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
        """FLOPs of the data fit of one draw on n points per side in R^d (the cost model,
        :meth:`Component.fit_flops`); None: no model."""
        return None

    def feature_overhead_flops(self, d: int) -> float:
        """FLOPs per point beyond the projections (:meth:`Component.feature_overhead_flops`)."""
        return 0.0

    def fit_state(
        self,
        rng: np.random.Generator,
        d: int,
        fit: tuple[np.ndarray, np.ndarray],
        causal: bool = False,
    ) -> dict[str, np.ndarray]:
        """The data fit alone as float arrays (a learned map's weights; ``causal``: fitted to
        causal attention), so a caller can cache it under :attr:`fit_code`; ``sample`` is
        ``draw_from_state(fit_state(...))``."""
        raise NotImplementedError(f"{self.name} has no separate data fit")

    def normaliser_eps(self, draw: Draw) -> float:
        """ε added to every row's normaliser D̂_ii of linear attention with this map, in the units
        of its kernel estimate (0: none; a learned map whose features can all be 0, as the
        reference linear-attention code does: docs/methods.md#learned-feature-maps)."""
        return 0.0

    def state_shapes(self, d: int) -> dict[str, tuple[int, ...]]:
        """The shape of each array :meth:`fit_state` returns in R^d: a cached state whose arrays
        differ is damaged (computed again)."""
        raise NotImplementedError(f"{self.name} has no separate data fit")

    def draw_from_state(self, state: dict[str, np.ndarray], d: int, draws: int) -> Draw:
        """The draw of a fitted state from :meth:`fit_state` (the capability's other half)."""
        raise NotImplementedError(f"{self.name} has no separate data fit")

    @property
    def fit_code(self) -> str:
        """A digest of the code :meth:`fit_state` runs (and its options): a cache key part."""
        raise NotImplementedError(f"{self.name} has no separate data fit")


class FamilyEstimator(Estimator):
    """An estimator that is not ``component@weights`` but registered by its ``family``
    (``HybridEntry.of(cls)``): it checks its kernel and m, takes no λ projections n unless it says
    otherwise, and is named by its family."""

    family: str = ""
    paper: str = ""
    description: str = ""
    #: what m counts, in its error message
    m_counts: str = "projections"

    def __init__(
        self,
        kernel: str = "softmax",
        m: int = 128,
        n: int | None = None,
        weights: WeightsSampler | None = None,
    ) -> None:
        check_kernel(self.family, kernel)
        if n is not None:
            raise ValueError(f"{self.family} has no λ projections: no n")
        self.kernel, self.m = kernel, positive_int(f"m ({self.m_counts})", m)
        self.name = self.family

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kernel={self.kernel!r}, m={self.m})"

    def _check_sample(self, d: int, draws: int, fit: Fit | None, frame: int | None, why: str):
        """d and draws are positive, a data-dependent draw has its ``fit`` and no frame is asked
        for (``why``: the reason, in the message)."""
        positive_int("d", d)
        positive_int("draws", draws)
        if fit is None and self.data_dependent:
            raise ValueError(f"{self.name} is data-dependent: pass fit=(X, Y) to sample()")
        if frame is not None and frame < d:
            raise ValueError(f"{self.name} {why}: no frames")


def whole_maps(est: Estimator, draw: Draw, X: np.ndarray, Y: np.ndarray) -> list[Block]:
    """The one block of a bilinear estimate: all rows, all columns, the estimator's two maps."""
    every = slice(None)
    return [(every, every, est.query_log_features(draw, X), est.key_log_features(draw, Y))]
