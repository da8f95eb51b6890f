"""Fitting a learned feature map to softmax attention: the maps, the loss and its gradient.

docs/methods.md#learned-feature-maps. A learned map φ_θ is fitted per head so that linear attention
with it copies softmax attention on the fitting tokens (Hedgehog, Zhang et al., ICLR 2024,
arXiv 2402.04347, Sec. 4.1 and Eq. 4): with A = softmax(QKᵀ) row-wise and G = φ_q(Q) φ_k(K)ᵀ,

    L(θ) = (1/T) Σ_i KL(A_i ‖ Â_i),   Â_ij = (G_ij + ε) / Σ_j (G_ij + ε),

the cross-entropy of Hedgehog's distillation less the (constant) entropy of A, so L ≥ 0 and L = 0
exactly when linear attention equals softmax attention. For causal attention (a decoder's, or
``attention --causal``) the sums run over the keys j ≤ i each query sees. ε = 0 for maps whose
features are positive (Hedgehog); a map that can give G_ij = 0 (T2R's ReLU, Kasai et al., EMNLP
2021, Eq. 4) has a small ε in the loss only, so the loss is finite — the fitted map itself is used
without it.

Queries and keys have maps of their own (θ = (W_q, b_q, W_k, b_k), as in Hedgehog). The gradient is
analytic (backpropagation written out; tests check it against finite differences) and the fit is
scipy's L-BFGS-B, on a loss computed in float32 (``FIT_DTYPE``), from a deterministic start: W at
the identity (extra columns, when there are more projections than coordinates, drawn from the
caller's generator), b = 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax

#: (features (N, F), backward: dL/dfeatures -> dL/du (N, P)) of a map applied to u = XW + b
MapFn = Callable[[np.ndarray], tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]]


def hedgehog_map(u: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Hedgehog's map φ = [softmax(u), softmax(−u)] over the P projections of each row (Hedgehog
    Sec. 4.1; the softmax-normalised form of its Eq. 5, as in the LoLCATs code).

    Parameters
    ----------
    u : ndarray, shape (N, P)
        xW + b.

    Returns
    -------
    phi : ndarray, shape (N, 2P)
    backward : callable
        dL/dφ (N, 2P) -> dL/du (N, P).
    """
    p = u.shape[-1]
    s_pos, s_neg = _softmax(u), _softmax(-u)

    def backward(g: np.ndarray) -> np.ndarray:
        g_pos, g_neg = g[:, :p], g[:, p:]
        d_pos = s_pos * (g_pos - np.sum(g_pos * s_pos, axis=-1, keepdims=True))
        d_neg = s_neg * (g_neg - np.sum(g_neg * s_neg, axis=-1, keepdims=True))
        return d_pos - d_neg

    return np.concatenate([s_pos, s_neg], axis=-1), backward


def _softmax(u: np.ndarray) -> np.ndarray:
    """scipy.special.softmax(u, axis=-1), the same operations in place, without its per-call
    array-namespace dispatch (the fit calls it four times per loss evaluation)."""
    e = np.subtract(u, np.max(u, axis=-1, keepdims=True))
    np.exp(e, out=e)
    e /= np.sum(e, axis=-1, keepdims=True)
    return e


def hedgehog_log_map(u: np.ndarray) -> np.ndarray:
    """log φ of :func:`hedgehog_map` (exact, for the log-space features): (..., 2P)."""
    return np.concatenate([log_softmax(u, axis=-1), log_softmax(-u, axis=-1)], axis=-1)


def relu_map(u: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """T2R's map φ = max(u, 0) (Kasai et al. 2021, Eq. 4): features (N, P) and its backward."""
    active = u > 0
    # = np.where(active, u, 0.0) at a sixth of its cost: fmax gives 0 for u ≤ 0 and NaN, and
    # adding 0 turns its −0 into +0
    phi = np.fmax(u, 0)
    phi += 0
    return phi, lambda g: np.where(active, g, 0.0)


@dataclass(frozen=True)
class Target:
    """The softmax attention the map must copy: A (T, S), row entropies folded in as a constant;
    ``mask`` (T, S) bool, the keys each query sees (None: all)."""

    Q: np.ndarray
    K: np.ndarray
    A: np.ndarray
    entropy: float  # (1/T) Σ_i Σ_j A_ij log A_ij, so that the loss is a KL divergence
    mask: np.ndarray | None = None

    @classmethod
    def of(cls, Q: np.ndarray, K: np.ndarray, causal: bool = False) -> Target:
        """Softmax attention of queries Q (T, d) on keys K (S, d) (logits QKᵀ); ``causal``: query
        i sees keys 0..i only (T = S)."""
        logits = Q @ K.T
        mask = np.tril(np.ones(logits.shape, dtype=bool)) if causal else None
        if mask is not None:
            logits = np.where(mask, logits, -np.inf)
        log_a = log_softmax(logits, axis=-1)
        A = np.exp(log_a)
        entropy = np.sum(A * np.where(A > 0, log_a, 0.0)) / len(Q)
        return cls(Q, K, A, float(entropy), mask)


def attention_kl(
    theta: np.ndarray, target: Target, fmap: MapFn, p: int, eps: float
) -> tuple[float, np.ndarray]:
    """L(θ) (module doc) and its gradient.

    Parameters
    ----------
    theta : ndarray, shape (2(d + 1)P,)
        (W_q (d, P), b_q (P), W_k (d, P), b_k (P)), flattened in that order.
    target : Target
    fmap : callable
        The map applied to u = XW + b (:func:`hedgehog_map`, :func:`relu_map`).
    p : int
        Projections P.
    eps : float
        ε of the loss (module doc).

    Returns
    -------
    (loss, gradient of shape (2(d + 1)P,))
    """
    Q, K, A = target.Q, target.K, target.A
    t, d = Q.shape
    Wq, bq, Wk, bk = unpack(theta, d, p)
    phi_q, back_q = fmap(Q @ Wq + bq)
    phi_k, back_k = fmap(K @ Wk + bk)
    # (T, S) arrays are updated in place: a fresh one costs more in page faults than its arithmetic
    G = phi_q @ phi_k.T
    if eps:
        G += eps
    rows = G.sum(axis=1) if target.mask is None else np.sum(G, axis=1, where=target.mask)
    R = np.divide(A, G)
    np.log(G, out=G)
    G *= A  # A log G
    cross = np.sum(G) if target.mask is None else np.sum(G, where=target.mask)
    loss = (np.sum(np.log(rows)) - cross) / t + target.entropy
    np.subtract(1.0 / rows[:, None], R, out=R)  # dL/dG = (1/rows - A/G) / t
    if target.mask is not None:  # only the keys each query sees (A is 0 elsewhere)
        R[~target.mask] = 0.0
    R /= t
    du_q = back_q(R @ phi_k)
    du_k = back_k(R.T @ phi_q)
    grad = np.concatenate([(Q.T @ du_q).ravel(), du_q.sum(0), (K.T @ du_k).ravel(), du_k.sum(0)])
    return float(loss), grad


def unpack(theta: np.ndarray, d: int, p: int) -> tuple[np.ndarray, ...]:
    """(W_q (d, P), b_q (P), W_k (d, P), b_k (P)) from the flat θ."""
    n = d * p
    Wq = theta[:n].reshape(d, p)
    bq = theta[n : n + p]
    Wk = theta[n + p : 2 * n + p].reshape(d, p)
    bk = theta[2 * n + p :]
    return Wq, bq, Wk, bk


def initial_theta(rng: np.random.Generator, d: int, p: int) -> np.ndarray:
    """W = the first P columns of I_d (then N(0, 1/d) columns beyond d, from ``rng``), b = 0; the
    same start for the query and the key map."""
    W = np.zeros((d, p))
    shared = min(d, p)
    W[:shared, :shared] = np.eye(shared)
    if p > d:
        W[:, d:] = rng.standard_normal((d, p - d)) / np.sqrt(d)
    b = np.zeros(p)
    return np.concatenate([W.ravel(), b, W.ravel(), b])


#: the precision of the fit's loss and gradient: float32 halves the fit's CPU (its (T, S) arrays
#: and products), and a float32 fit ends within a few per cent of a float64 one's loss either way,
#: as the fits end at the iteration cap (docs/methods.md#learned-feature-maps); θ, L-BFGS-B's state
#: and the returned loss stay float64
FIT_DTYPE = np.float32

#: the fitting tokens of one side: one sequence (T, d), or several sequences, each attending only
#: to itself (a text longer than the model's length, cut into sequences of that length)
Sequences = np.ndarray | list[np.ndarray] | tuple[np.ndarray, ...]


def as_sequences(X: Sequences) -> list[np.ndarray]:
    """The sequences of one side as a list of (T_s, d) float arrays (one array: one sequence)."""
    if isinstance(X, np.ndarray):
        return [np.asarray(X, float)]
    return [np.asarray(x, float) for x in X]


def sequences_kl(
    theta: np.ndarray, targets: list[Target], fmap: MapFn, p: int, eps: float
) -> tuple[float, np.ndarray]:
    """L(θ) over several sequences: (1/ΣT_s) Σ_s Σ_i KL(A_i ‖ Â_i), each sequence's attention its
    own (the module doc's L is the case of one), and its gradient."""
    total = sum(len(t.Q) for t in targets)
    loss, grad = 0.0, np.zeros_like(theta)
    for target in targets:
        part, g = attention_kl(theta, target, fmap, p, eps)
        weight = len(target.Q) / total
        loss += weight * part
        grad += weight * g
    return loss, grad


def fit_map(
    Q: Sequences,
    K: Sequences,
    fmap: MapFn,
    p: int,
    rng: np.random.Generator,
    iters: int,
    eps: float = 0.0,
    causal: bool = False,
) -> tuple[np.ndarray, float]:
    """Fit θ by L-BFGS-B on the attention KL (module doc), deterministic given ``rng``'s state.

    Parameters
    ----------
    Q : ndarray, shape (T, d), or a list of S such arrays (T_s, d)
        Fitting queries (scaled: qᵀk is the logit); a list: sequences, each attending to its own
        keys only (:func:`sequences_kl`).
    K : ndarray, shape (S, d), or a list of such arrays (one per sequence of ``Q``)
        Fitting keys.
    fmap : callable
        The map (:func:`hedgehog_map`, :func:`relu_map`).
    p : int
        Projections P.
    rng : numpy.random.Generator
        Source of the initial columns beyond d (:func:`initial_theta`).
    iters : int
        Maximum L-BFGS-B iterations.
    eps : float
        ε of the loss.
    causal : bool
        Copy causal attention (query i sees keys 0..i; T = S).

    Returns
    -------
    theta : ndarray, shape (2(d + 1)P,)
    loss : float
        L at θ (nats per query row, over every sequence).
    """
    qs, ks = as_sequences(Q), as_sequences(K)
    if len(qs) != len(ks) or not qs:
        raise ValueError(f"{len(qs)} query and {len(ks)} key sequences: need as many, at least 1")
    targets = [Target.of(q, k, causal) for q, k in zip(qs, ks, strict=True)]
    narrow = [
        Target.of(q.astype(FIT_DTYPE), k.astype(FIT_DTYPE), causal)
        for q, k in zip(qs, ks, strict=True)
    ]

    def loss_and_grad(theta: np.ndarray) -> tuple[float, np.ndarray]:
        with np.errstate(all="ignore"):
            loss, grad = sequences_kl(theta.astype(FIT_DTYPE), narrow, fmap, p, eps)
        if np.isfinite(loss) and np.isfinite(grad).all():
            return loss, grad.astype(float)
        # a step where float32 under- or overflows (features of 0, G of 0): float64 decides it
        return sequences_kl(theta, targets, fmap, p, eps)

    theta0 = initial_theta(rng, qs[0].shape[1], p)
    res = minimize(loss_and_grad, theta0, jac=True, method="L-BFGS-B", options={"maxiter": iters})
    theta = res.x if np.isfinite(res.fun) else theta0
    return theta, float(sequences_kl(theta, targets, fmap, p, eps)[0])
