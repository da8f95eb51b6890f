"""Every method of the attention study as the attention of every encoder layer.

docs/experiments.md#similarity. A method is named as in ``rfbench attention``: a registry feature
map (random maps, Nyström, taylor2, the fitted coupling ``positive@fitted``, the learned maps
``hedgehog`` and ``t2r``), or a local method (``window``, ``window+<map>``, ``top-k``;
rfbench.compute.experiments.attention.local), at a feature budget F with the study's rules
(⌊F/l⌋ projections; a window of F keys; F/2 keys plus F/2 features; k = F). Each (layer, head)
gets one draw, fitted where the method fits on that head's queries and keys of the attention
study's fitting text (GPL-3, rfbench.compute.experiments.attention.heldout; learned maps through
its cache), never on the documents scored; within a draw every document sees the same map.
Documents run in padded batches: each one's real tokens are attended on their own.
"""

from __future__ import annotations

import functools
import zlib
from typing import Any

import numpy as np

from rfbench.compute.experiments.attention import budget, heldout
from rfbench.compute.experiments.attention.local import (
    LocalMethod,
    hybrid_estimate,
    masked_softmax_estimate,
    top_k_mask,
    window_mask,
)
from rfbench.compute.experiments.attention.metrics import estimate_head
from rfbench.compute.features import registry
from rfbench.compute.features.base import Draw, Estimator
from rfbench.compute.models.bert import AttentionFn

_NO_ROWS = np.arange(0)


class Method:
    """One method at one feature budget (module doc).

    Parameters
    ----------
    name : str
        A registry name (softmax kernel) or a local method.
    features : int
        The feature budget F.
    """

    def __init__(self, name: str, features: int) -> None:
        self.name, self.features = name, features
        self.local = LocalMethod.parse(name)
        self.keys = self.local.keys(features) if self.local is not None else 0
        self.estimator: Estimator | None = None
        map_name = self.local.feature_map if self.local is not None else name
        if map_name is not None:
            one = registry.get(map_name, kernel="softmax", m=1)
            m = budget.projections(one, features - self.keys)
            if m < 1:
                raise ValueError(
                    f"{name} needs a budget of at least "
                    f"{budget.features_per_projection(one) + self.keys} features"
                )
            self.estimator = registry.get(map_name, kernel="softmax", m=m)

    @property
    def deterministic(self) -> bool:
        """The same attention in every draw (window, top-k, taylor2, learned maps)."""
        return self.estimator is None or self.estimator.deterministic

    def columns(self) -> dict[str, Any]:
        """What the rows say about the method: projections ``m``, ``window`` or ``top_k`` keys."""
        out: dict[str, Any] = {"budget": self.features}
        if self.estimator is not None:
            out["m"] = self.estimator.m
        if self.local is not None:
            out["top_k" if self.local.oracle else "window"] = self.keys
        return out

    def attention(self, model: str, fit_tokens: int, seed: int) -> AttentionFn:
        """The attention function of one draw: each (layer, head) drawn from a generator keyed
        on (seed, method, layer, head), so batches and the order of heads do not matter.

        Parameters
        ----------
        model : str
            The model ("" = default) whose fitting heads the maps fit on.
        fit_tokens : int
            Length of the fitting text's sequence.
        seed : int
            The draw's seed.

        Returns
        -------
        AttentionFn
        """
        draws: dict[tuple[int, int], Draw] = {}
        key = zlib.crc32(self.name.encode())

        def draw(layer: int, h: int) -> Draw:
            if (layer, h) not in draws:
                assert self.estimator is not None
                gen = np.random.default_rng([seed, key, layer, h])
                fitter = _fitter(model, fit_tokens, layer)
                draws[(layer, h)] = fitter.sample(self.estimator, gen, h, 1, label=self.name)
            return draws[(layer, h)]

        def attend(
            layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray
        ) -> np.ndarray:
            out = np.zeros_like(v)
            lengths = mask.sum(axis=1)
            for h in range(q.shape[1]):
                d = draw(layer, h) if self.estimator is not None else None
                for b, n in enumerate(lengths):
                    args = (q[b, h, :n], k[b, h, :n], v[b, h, :n])
                    out[b, h, :n] = self._head(d, *(x.astype(np.float64) for x in args))
            return out

        return attend

    def _head(self, draw: Draw | None, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
        """One head of one document: (n, d_v) from q, k (n, d), v (n, d_v)."""
        n = len(q)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if self.local is None:
                assert self.estimator is not None and draw is not None
                return estimate_head(self.estimator, draw, q, k, v, _NO_ROWS).out[0]
            keys = min(self.keys, n)
            if self.local.oracle:
                mask = top_k_mask(q @ k.T, keys)
            else:
                mask = window_mask(n, n, keys)
            if self.estimator is None:
                return masked_softmax_estimate(q, k, v, mask, _NO_ROWS).out[0]
            assert draw is not None
            return hybrid_estimate(self.estimator, draw, q, k, v, mask, _NO_ROWS).out[0]


@functools.lru_cache(maxsize=16)
def _fitter(model: str, tokens: int, layer: int) -> heldout.Fitter:
    """The attention study's fitter of one layer's heads: the GPL-3 text's first sequence of
    ``tokens`` tokens (its ``fit_tokens``; the attention study's default, the whole text in such
    sequences, costs one fit per sequence)."""
    return heldout.Fitter(heldout.split(model, "", tokens, layer, fit_tokens=tokens))
