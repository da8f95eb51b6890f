"""Local and sparse attention, the baselines kept beside (or instead of) a feature map.

docs/methods.md#local-attention (budgets: docs/experiments.md#attention):

- ``window``: exact softmax over the w keys nearest each query (Longformer, Beltagy et al. 2020,
  §3.1, "sliding window");
- ``window+<map>``: exact inside the window, a softmax feature map outside, one normaliser
  (LoLCATs, Zhang et al. 2024, arXiv 2410.10254, Eq. 6; Based, Arora et al. 2024, §3);
- ``top-k``: exact softmax over each row's k largest logits, an oracle (Gupta et al. 2021,
  arXiv 2106.06899, "top-k attention").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rfbench.compute.experiments.attention.metrics import HeadEstimate, _real_maps
from rfbench.compute.features.base import Draw, Estimator

WINDOW, TOP_K, HYBRID = "window", "top-k", "window+"


@dataclass(frozen=True)
class LocalMethod:
    """A local method by name: ``window``, ``top-k`` or ``window+<registry name>``.

    Attributes
    ----------
    name : str
    kind : {"window", "top-k", "hybrid"}
    feature_map : str or None
        The registry name of a hybrid's map outside the window.
    """

    name: str
    kind: str
    feature_map: str | None = None

    @classmethod
    def parse(cls, name: str) -> LocalMethod | None:
        """The local method ``name`` names, or None for a registry estimator."""
        if name == WINDOW:
            return cls(name, "window")
        if name == TOP_K:
            return cls(name, "top-k")
        if name.startswith(HYBRID) and len(name) > len(HYBRID):
            return cls(name, "hybrid", name[len(HYBRID) :])
        return None

    @property
    def oracle(self) -> bool:
        """Whether it needs every logit to choose its keys (top-k)."""
        return self.kind == "top-k"

    def keys(self, features: int, window: int = 0) -> int:
        """Keys attended exactly per row at feature budget ``features`` (the rule of the module
        docstring), or ``window`` when given (> 0) for the window methods."""
        if self.kind == "top-k":
            return features
        if window:
            return window
        return features if self.kind == "window" else features // 2


def is_local(name: str) -> bool:
    """Whether ``name`` is a local method rather than a registry estimator."""
    return LocalMethod.parse(name) is not None


def window_mask(t: int, s: int, w: int, causal: bool = False, sinks: int = 0) -> np.ndarray:
    """The sliding window: (T, S) bool.

    Bidirectional: centred, exactly min(w, S) keys per row. Query i (of T) sits at key position
    round(i (S − 1)/(T − 1)) (i itself when T = S); its window starts ⌊w/2⌋ keys before that,
    shifted to lie inside [0, S). Causal (T = S): the w most recent keys i − w < j ≤ i (fewer in
    the first w − 1 rows, which see fewer keys).

    With ``sinks`` > 0 (attention sinks, StreamingLLM: Xiao et al., 2023, arXiv 2309.17453,
    §3.2) the first ``sinks`` keys are always attended and the window proper has w − sinks keys,
    so a row attends at most w keys as before (fewer where the two overlap); causally a row
    never sees a key beyond its own position. Needs sinks < w.
    """
    if sinks:
        if sinks >= w:
            raise ValueError(f"sinks ({sinks}) must be fewer than the window's keys ({w})")
        mask = window_mask(t, s, w - sinks, causal)
        sink = np.arange(s)[None, :] < sinks
        if causal:
            sink = sink & (np.arange(s)[None, :] <= np.arange(t)[:, None])
        return mask | sink
    w = min(w, s)
    j = np.arange(s)
    if causal:
        i = np.arange(t)[:, None]
        return (j <= i) & (j > i - w)
    centre = np.arange(t) if t == s else np.round(np.linspace(0, s - 1, t)).astype(int)
    start = np.clip(centre - w // 2, 0, s - w)
    return (j >= start[:, None]) & (j < start[:, None] + w)


def top_k_mask(logits: np.ndarray, k: int, visible: np.ndarray | None = None) -> np.ndarray:
    """Each row's k largest logits among its ``visible`` keys (all by default): (T, S) bool from
    logits (T, S); a row that sees at most k keys keeps them all."""
    s = logits.shape[1]
    if visible is not None:
        logits = np.where(visible, logits, -np.inf)
    if k >= s:
        mask = np.ones(logits.shape, bool)
    else:
        idx = np.argpartition(-logits, k - 1, axis=1)[:, :k]
        mask = np.zeros(logits.shape, bool)
        np.put_along_axis(mask, idx, True, axis=1)
    return mask if visible is None else mask & visible


def masked_softmax_estimate(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray, rows: np.ndarray
) -> HeadEstimate:
    """Exact softmax restricted to ``mask`` (window or top-k), as a one-draw estimate.

    Parameters
    ----------
    q : ndarray, shape (T, d)
    k : ndarray, shape (S, d)
    v : ndarray, shape (S, d_v)
    mask : ndarray of bool, shape (T, S)
        The keys each row attends; at least one per row.
    rows : ndarray of int, shape (R,)
        The query rows of the matrix metrics.

    Returns
    -------
    HeadEstimate
        Draws axis of length 1; normaliser 1 (positive: every row is a distribution).
    """
    logits = np.where(mask, q @ k.T, -np.inf)
    a = np.exp(logits - logits.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    return HeadEstimate((a @ v)[None], np.ones((1, len(q))), rows, a[rows][None])


def hybrid_estimate(
    est: Estimator,
    draw: Draw,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray,
    rows: np.ndarray,
    visible: np.ndarray | None = None,
) -> HeadEstimate:
    """Exact inside ``mask``, ``est``'s features outside, one normaliser (LoLCATs Eq. 6); with
    ``visible`` (the causal mask) the features cover only the visible keys outside the window.

    Row i is scaled by c_i = max(max_{j∈W(i)} L_ij, a_i + max_j b_j), with a_i, b_j the log
    scales of the features (rfbench.features.base.Features): no term exceeds its true size
    relative to e^{c_i}, so nothing overflows, and the scale cancels in the ratio.

    Parameters
    ----------
    est : Estimator
        A softmax-kernel estimator; ``draw`` from its ``sample``.
    draw : Draw
    q : ndarray, shape (T, d)
    k : ndarray, shape (S, d)
    v : ndarray, shape (S, d_v)
    mask : ndarray of bool, shape (T, S)
        The window.
    rows : ndarray of int, shape (R,)
    visible : ndarray of bool, shape (T, S), optional
        The keys each query sees (default all).

    Returns
    -------
    HeadEstimate
        ``out`` (draws, T, d_v), ``normaliser`` (draws, T) up to a positive factor per row,
        ``matrix`` (draws, R, S).
    """
    logits = q @ k.T
    fq = est.query_log_features(draw, q)
    fk = est.key_log_features(draw, k)
    phi, psi = _real_maps(fq.values, fk.values)
    a, b = fq.log_scale, fk.log_scale  # (draws, T), (draws, S)
    inside = np.where(mask, logits, -np.inf).max(axis=1)  # (T,)
    outer = ~mask if visible is None else visible & ~mask  # the keys the features cover
    b_top = np.max(
        np.where(outer[None] & np.isfinite(b)[:, None, :], b[:, None, :], -np.inf), axis=-1
    )  # (draws, T): the largest key scale each row's features use
    c = np.maximum(inside[None], a + b_top)  # (draws, T)
    # (draws, T, S) arrays computed in place: the operations of exact + outside, fewer passes
    with np.errstate(over="ignore", invalid="ignore"):
        raw = np.subtract(logits[None], c[..., None])
        np.exp(raw, out=raw)
        np.copyto(raw, 0.0, where=~mask)  # exact inside the window
        scale = np.add(a[..., None], b[:, None, :])
        scale -= c[..., None]
        np.exp(scale, out=scale)
        outside = phi @ np.swapaxes(psi, -1, -2)
        outside *= scale
        np.copyto(outside, 0.0, where=~outer)  # the keys the features cover
    raw += outside  # (draws, T, S)
    den = raw.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        matrix = raw[:, rows]
        matrix /= den[:, rows, None]
        out = raw @ v
        out /= den[..., None]
    return HeadEstimate(out, den, rows, matrix)
