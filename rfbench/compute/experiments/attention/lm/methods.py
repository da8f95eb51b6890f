"""Every method of the attention study as a causal language model's attention, in any layer.

docs/experiments.md#language-model. Grouped-query attention is kept as the model has it: a
key/value head serves ``group`` query heads, so each method keeps **one key-side map per
key/value head** (one draw, or one fitted map, per (layer, key/value head)), evaluated on the
keys once and on each of its query heads' queries. The methods, at feature budget F:

- ``uniform``: the running mean of the values (query i: the mean of v_0..v_i);
- a registry feature map: causal linear attention as prefix sums (rfbench.compute.experiments.
  attention.causal.prefix_attention) with ⌊F/l⌋ projections; a learned map (Hedgehog, T2R) or a
  fitted coupling (``@fitted``) fitted once per (layer, key/value head) on the fitting text;
- ``window``: exact softmax over F keys per row, of which the first ``sinks`` tokens of the
  sequence (attention sinks, StreamingLLM: Xiao et al., 2023, arXiv 2309.17453, §3.2) and the
  F − sinks most recent;
- ``window+<map>``: exact over ⌊F/2⌋ keys so chosen, the map over the other visible keys with
  F − ⌊F/2⌋ features, one normaliser (LoLCATs Eq. 6);
- ``top-k``: exact softmax over each row's F largest visible logits (an oracle).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rfbench.compute.experiments.attention import budget
from rfbench.compute.experiments.attention.causal import prefix_attention
from rfbench.compute.experiments.attention.local import (
    LocalMethod,
    hybrid_estimate,
    top_k_mask,
    window_mask,
)
from rfbench.compute.experiments.attention.metrics import _real_maps
from rfbench.compute.features import registry
from rfbench.compute.features.base import Draw, Estimator, declares
from rfbench.compute.models.llama import LMAttentionFn, causal_softmax, exact_attention, grouped

#: the method that is no approximation, and the one that knows nothing of the keys
EXACT, UNIFORM = "exact", "uniform"
#: (layer, kv head) -> the fitting text's (queries of the group interleaved, keys), each (T, d)
FitData = Callable[[int, int], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Method:
    """A method at one feature budget.

    Attributes
    ----------
    name : str
        ``exact``, ``uniform``, a registry name, ``window``, ``window+<map>`` or ``top-k``.
    features : int
        The budget F (0 for exact and uniform).
    sinks : int
        Always-visible first tokens of the window methods (part of their exact keys).
    """

    name: str
    features: int = 0
    sinks: int = 0

    @property
    def local(self) -> LocalMethod | None:
        return LocalMethod.parse(self.name)

    @property
    def map_name(self) -> str | None:
        """The registry feature map used (alone or outside a window), else None."""
        if self.name in (EXACT, UNIFORM):
            return None
        local = self.local
        return self.name if local is None else local.feature_map

    def keys(self) -> int:
        """Exact keys per row (window, top-k, hybrid), else 0."""
        local = self.local
        return 0 if local is None else local.keys(self.features)

    def estimator(self) -> Estimator | None:
        """The feature map at its share of the budget (None without one)."""
        name = self.map_name
        return None if name is None else budget.estimator(name, self.features - self.keys())

    @property
    def random(self) -> bool:
        """Whether its attention changes from draw to draw."""
        est = self.estimator()
        return est is not None and not est.deterministic and not learned(est)

    def check(self) -> str | None:
        """Why the budget is impossible for this method (None if it is fine)."""
        if self.name in (EXACT, UNIFORM):
            return None
        keys = self.keys()
        if self.local is not None and keys < 1:
            return f"at least {2 if self.local.feature_map else 1} features for {self.name}"
        if self.local is not None and self.sinks >= keys and self.local.kind != "top-k":
            return f"more than {self.sinks} exact keys (the sinks) for {self.name}"
        name = self.map_name
        if name is None:
            return None if self.features >= 1 else "at least 1 key"
        per = budget.features_per_projection(registry.get(name, kernel="softmax", m=1))
        if self.features - keys < per:
            return f"at least {per + keys} features for {self.name} ({per} per projection)"
        return None


def learned(est: Estimator) -> bool:
    """Whether ``est`` is a learned map (its fit cached apart from its draws)."""
    return declares(type(est), "fit_state", Estimator)


def visible_window(t: int, keys: int, sinks: int) -> np.ndarray:
    """The exact keys of a causal window with sinks, (T, T) bool: the first ``sinks`` tokens and
    the ``keys − sinks`` most recent keys of each row (rfbench.compute.experiments.attention.
    local.window_mask)."""
    return window_mask(t, t, keys, causal=True, sinks=sinks)


def attention(
    method: Method, seed: int, fit_data: FitData | None, fitted: Callable | None = None
) -> LMAttentionFn:
    """The method as an :data:`LMAttentionFn` (exact softmax for ``exact``).

    Parameters
    ----------
    method : Method
    seed : int
        The draw's seed: (layer, key/value head) draw from ``default_rng([seed, crc(name),
        layer, kv head])``, so a draw does not depend on the order layers run in.
    fit_data : callable or None
        (layer, kv head) -> the fitting text's queries and keys, for data-dependent maps.
    fitted : callable, optional
        (est, layer, kv head) -> a Draw of a learned map (cached fits); default fits now on
        ``fit_data``.

    Returns
    -------
    LMAttentionFn
    """
    if method.name == EXACT:
        return exact_attention
    if method.name == UNIFORM:
        return uniform_attention
    local, est = method.local, method.estimator()
    draws: dict[tuple[int, int], Draw] = {}

    def draw_of(layer: int, g: int, d: int) -> Draw:
        if (layer, g) not in draws:
            if learned(est) and fitted is not None:
                draws[(layer, g)] = fitted(est, layer, g)
            else:
                fit = fit_data(layer, g) if fit_data is not None and est.data_dependent else None
                tag = zlib.crc32(method.name.encode())
                gen = np.random.default_rng([seed, tag, layer, g])
                draws[(layer, g)] = est.sample(gen, d=d, draws=1, fit=fit)
        return draws[(layer, g)]

    def attend(layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
        hkv, t, d = k.shape
        if not all(np.isfinite(a).all() for a in (q, k, v)):
            return np.full(q.shape, np.nan)  # an earlier layer broke the pass: it stays broken
        qg = grouped(q, hkv).astype(np.float64)
        k64, v64 = k.astype(np.float64), v.astype(np.float64)
        causal = np.tri(t, dtype=bool)
        if local is not None and local.kind == "top-k":
            logits = qg @ np.swapaxes(k64, -1, -2)[:, None]
            masks = np.stack([top_k_mask(a, method.features, causal) for a in
                              logits.reshape(-1, t, t)])  # fmt: skip
            return causal_softmax(q, k, v, masks.reshape(logits.shape))
        window = visible_window(t, method.keys(), method.sinks) if local is not None else None
        if est is None:  # window alone
            return causal_softmax(q, k, v, window)
        out = np.empty(qg.shape)
        rows = np.arange(0)
        for g in range(hkv):
            draw = draw_of(layer, g, d)
            if window is not None:
                for j in range(qg.shape[1]):
                    e = hybrid_estimate(est, draw, qg[g, j], k64[g], v64[g], window, rows, causal)
                    out[g, j] = e.out[0]
                continue
            fk = est.key_log_features(draw, k64[g])  # the key side once per key/value head
            fq = est.query_log_features(draw, qg[g].reshape(-1, d))
            phi, psi = _real_maps(fq.values[0], fk.values[0])
            phi = phi.reshape(qg.shape[1], t, -1)
            out[g] = prefix_attention(phi, psi[None], fk.log_scale[0][None], v64[g][None])[0]
        return out.reshape(q.shape)

    return attend


def uniform_attention(layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Causal uniform attention: query i gets the mean of v_0..v_i (every query head of a
    key/value head alike)."""
    hkv, t, _ = v.shape
    mean = np.cumsum(v, axis=1) / np.arange(1, t + 1)[:, None]
    group = q.shape[0] // hkv
    return np.repeat(mean, group, axis=0).astype(q.dtype)


def only_in(attend: LMAttentionFn, layer: int) -> LMAttentionFn:
    """``attend`` in ``layer``, the model's exact attention elsewhere."""

    def one(at: int, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
        return (attend if at == layer else exact_attention)(at, q, k, v)

    return one
