"""Learned feature maps of softmax attention: ``hedgehog`` and ``t2r``
(docs/methods.md#learned-feature-maps).

Not random features: a map φ_θ per head, fitted on a head's queries and keys passed as
``sample(..., fit=(Q, K))`` so that linear attention φ_q(q)ᵀφ_k(k) / Σ copies softmax attention
(:mod:`rfbench.compute.features.learned_fit`), then applied unchanged to any other tokens.

- ``hedgehog`` (Zhang et al., ICLR 2024, arXiv 2402.04347, Sec. 4.1):
  φ(x) = [softmax(xW + b), softmax(−(xW + b))], 2 features per projection (column of W);
- ``t2r`` (Kasai et al., EMNLP 2021, "Finetuning Pretrained Transformers into RNNs", Eq. 4):
  φ(x) = ReLU(xW + b), 1 feature per projection, fitted with Hedgehog's loss (attention
  distillation) instead of task finetuning.

``m`` is the number of projections (columns of W), as for every estimator; the map has
``m · features_per_projection`` features. A fitted map is the same in every draw (``deterministic``)
and biased. φ_qᵀφ_k estimates exp(qᵀk) up to one constant, which is set so that the sums over the
fitting pairs agree (attention is invariant to it; it makes a kernel value comparable).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import scipy
from scipy.special import logsumexp

from rfbench.compute.checks import positive_int
from rfbench.compute.features import learned_fit as lf
from rfbench.compute.features.base import (
    Draw,
    FamilyEstimator,
    Features,
    Projections,
    Side,
    WeightsSampler,
    check_inputs,
    kernel_row_log,
)
from rfbench.compute.features.registry import HybridEntry, register_hybrid
from rfbench.compute.kernels import sq_norms

#: L-BFGS-B iterations of a fit (about 0.7 CPU s per head at T = 512, d = 32, 64 features)
ITERS = 150


@functools.cache
def _source_digest() -> str:
    sha = hashlib.sha256()
    for module in (__file__, lf.__file__):
        sha.update(Path(module).read_bytes())
    sha.update(f"numpy {np.__version__} scipy {scipy.__version__}".encode())
    return sha.hexdigest()


class LearnedMap(FamilyEstimator):
    """A per-head feature map fitted to softmax attention (module doc)."""

    data_dependent = True  # fitted to the heads' q, k (``sample(..., fit=)``)
    #: features per column of W
    features_per_projection: int = 1
    #: ε of the loss (learned_fit): 0 for maps whose features are positive
    loss_eps = 0.0

    def __init__(
        self,
        kernel: str = "softmax",
        m: int = 64,
        n: int | None = None,
        weights: WeightsSampler | None = None,
        iters: int = ITERS,
    ) -> None:
        super().__init__(kernel, m, n)
        self.iters = positive_int("iters (L-BFGS-B iterations)", iters)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kernel={self.kernel!r}, m={self.m}, iters={self.iters})"

    @property
    def deterministic(self) -> bool:
        """Every draw is the fitted map."""
        return True

    @staticmethod
    def fmap(u: np.ndarray) -> tuple[np.ndarray, Any]:
        raise NotImplementedError

    def log_map(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values (..., F) with each row's largest entry 1 (or all 0), log row scale (...))."""
        raise NotImplementedError

    # ------------------------------------------------------------------ fit

    @property
    def fit_code(self) -> str:
        return hashlib.sha256(f"{_source_digest()} {self!r}".encode()).hexdigest()

    def state_shapes(self, d: int) -> dict[str, tuple[int, ...]]:
        """The shape of each array of :meth:`fit_state` (a cached state is checked against it)."""
        return {"Wq": (d, self.m), "bq": (self.m,), "Wk": (d, self.m), "bk": (self.m,),
                "log_scale": (), "loss": ()}  # fmt: skip

    def fit_state(
        self,
        rng: np.random.Generator,
        d: int,
        fit: tuple[lf.Sequences, lf.Sequences],
        causal: bool = False,
    ) -> dict[str, np.ndarray]:
        """Fit W, b of both maps on (Q, K) = ``fit`` (learned_fit.fit_map) to copy their softmax
        attention (``causal``: query i sees keys 0..i). Each side is one sequence (T, d) or a list
        of sequences (T_s, d), each attending to itself only (a long text cut in sequences).

        Returns
        -------
        dict
            ``Wq``, ``Wk`` (d, m), ``bq``, ``bk`` (m,), ``log_scale`` (): the constant of the
            kernel's scale, ``loss`` (): the attention KL on the fitting tokens (nats per row).
        """
        positive_int("d", d)
        qs, ks = ([check_inputs(a, d).reshape(-1, d) for a in lf.as_sequences(x)] for x in fit)
        theta, loss = lf.fit_map(qs, ks, self.fmap, self.m, rng, self.iters, self.loss_eps, causal)
        Wq, bq, Wk, bk = (a.copy() for a in lf.unpack(theta, d, self.m))
        totals, logits = [], []
        for Q, K in zip(qs, ks, strict=True):
            G = self.fmap(Q @ Wq + bq)[0] @ self.fmap(K @ Wk + bk)[0].T
            seen = np.tril(np.ones(G.shape, bool)) if causal else np.ones(G.shape, bool)
            totals.append(np.sum(G, where=seen))
            logits.append(logsumexp(np.where(seen, Q @ K.T, -np.inf)))
        total = float(np.sum(totals))
        scale = logsumexp(logits) - np.log(total) if total > 0 else 0.0
        return {"Wq": Wq, "bq": bq, "Wk": Wk, "bk": bk, "log_scale": np.array(float(scale)),
                "loss": np.array(loss)}  # fmt: skip

    def draw_from_state(self, state: dict[str, np.ndarray], d: int, draws: int) -> Draw:
        """The fitted map as ``draws`` identical draws."""
        positive_int("draws", draws)
        proj = {
            side: Projections(
                np.broadcast_to(state[f"W{side[0]}"].T, (draws, self.m, d)),
                np.broadcast_to(sq_norms(state[f"W{side[0]}"].T), (draws, self.m)),
                d,
            )
            for side in ("query", "key")
        }
        params = {"bq": state["bq"], "bk": state["bk"], "log_scale": float(state["log_scale"])}
        return Draw(proj, params, d)

    def sample(
        self,
        rng: np.random.Generator,
        d: int,
        draws: int = 1,
        fit: tuple[np.ndarray, np.ndarray] | None = None,
        frame: int | None = None,
    ) -> Draw:
        """Fit on ``fit = (Q, K)`` (required), then the fitted map (every draw the same)."""
        if fit is None:
            raise ValueError(f"{self.name} is fitted to data: pass fit=(Q, K) to sample()")
        self._check_sample(d, draws, fit, frame, "is fitted in R^d")
        return self.draw_from_state(self.fit_state(rng, d, fit), d, draws)

    # ------------------------------------------------------------------ features

    def log_features(self, draw: Draw, X: np.ndarray, side: Side) -> Features:
        proj = draw.projections[side]
        X = check_inputs(X, proj.frame)
        u = X @ np.swapaxes(proj.W, -1, -2) + draw.params[f"b{side[0]}"]
        values, log_row = self.log_map(u)
        log_row = log_row + 0.5 * draw.params["log_scale"]
        if self.alpha != 0.0:
            log_row = log_row + kernel_row_log(self.alpha, X)
        return Features(values, log_row)


class Hedgehog(LearnedMap):
    """φ(x) = [softmax(xW + b), softmax(−(xW + b))] (Hedgehog Sec. 4.1): 2 features per
    projection."""

    family = "hedgehog"
    paper = "Hedgehog (Zhang et al., ICLR 2024, arXiv 2402.04347) Sec. 4.1"
    description = "learned map [softmax(xW+b), softmax(-(xW+b))] fitted to attention per head"
    features_per_projection = 2
    fmap = staticmethod(lf.hedgehog_map)

    def log_map(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        log_phi = lf.hedgehog_log_map(u)
        top = np.max(log_phi, axis=-1)
        return np.exp(log_phi - top[..., None]), top


class T2R(LearnedMap):
    """φ(x) = ReLU(xW + b) (Kasai et al. 2021, Eq. 4): 1 feature per projection."""

    family = "t2r"
    paper = "T2R (Kasai et al., EMNLP 2021) Eq. 4; fitted with Hedgehog's loss"
    description = "learned map ReLU(xW+b) fitted to attention per head"
    features_per_projection = 1
    loss_eps = 1e-6
    #: ε of linear attention's normaliser φ(q)ᵀΣφ(k) + ε in the map's own (ReLU) units: the
    #: default of the reference code (fast-transformers' LinearAttention, Katharopoulos et al.
    #: 2020, eps=1e-6); a row where no ReLU feature is positive then gets the output 0, not 0/0
    NORMALISER_EPS = 1e-6
    fmap = staticmethod(lf.relu_map)

    def normaliser_eps(self, draw: Draw) -> float:
        """:attr:`NORMALISER_EPS` in the kernel estimate's units (× e^{log_scale})."""
        return self.NORMALISER_EPS * float(np.exp(draw.params["log_scale"]))

    def log_map(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        phi = np.maximum(u, 0.0)
        top = np.max(phi, axis=-1)
        safe = np.where(top > 0, top, 1.0)
        with np.errstate(divide="ignore"):
            return phi / safe[..., None], np.where(top > 0, np.log(safe), 0.0)


for _cls in (Hedgehog, T2R):
    register_hybrid(HybridEntry.of(_cls, takes_weights=False))
