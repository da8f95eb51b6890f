"""Causal attention: every query sees only the keys up to its own position.

docs/experiments.md#causal-attention. With M the lower-triangular mask, A = D⁻¹(M ∘ exp(QKᵀ)); a
feature map gives Â = D̂⁻¹(M ∘ φ(Q)ψ(K)ᵀ) as prefix sums (Katharopoulos et al., 2020, Eq. 8-9;
Performer, Choromanski et al., 2021, Sec. 2.6):

    Ô_i = φ(q_i)ᵀ S_i / φ(q_i)ᵀ z_i,   S_i = Σ_{j≤i} ψ(k_j) v_jᵀ,   z_i = Σ_{j≤i} ψ(k_j).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.features.base import Draw, Estimator

#: keys per chunk of the prefix sums (memory: draws × CHUNK² and draws × features × d_v)
CHUNK = 128


def causal_mask(t: int, s: int | None = None) -> np.ndarray:
    """The causal mask M_ij = [j ≤ i]: (t, s) bool (s defaults to t)."""
    return np.tri(t, t if s is None else s, dtype=bool)


def check_square(t: int, s: int) -> None:
    """Causal attention pairs query i with keys 0..i of the same sequence: T must equal S."""
    if t != s:
        raise ValueError(f"causal attention needs as many keys as queries ({s} keys, {t} queries)")


def head_truth(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> am.HeadTruth:
    """The exact causal attention of a head, q, k (T, d) and v (T, d_v), as a
    :class:`metrics.HeadTruth` of the masked matrix."""
    check_square(len(q), len(k))
    A, log_a = am.softmax_attention(q, k, causal_mask(len(q)))
    return am.HeadTruth(A, log_a, A @ v, v)


def _visible_weights(b: np.ndarray, m: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """e^{b_j − m_i} where key j is visible from row i (j ≤ i), else 0: (..., R, S)."""
    s = b.shape[-1]
    seen = np.arange(s)[None, :] <= rows[:, None]  # (R, S)
    gap = b[..., None, :] - m[..., rows, None]
    np.copyto(gap, -np.inf, where=~seen)
    return np.exp(gap, out=gap)


def prefix_attention(
    phi: np.ndarray, psi: np.ndarray, b: np.ndarray, v: np.ndarray, chunk: int = CHUNK
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Causal linear attention D̂⁻¹(M ∘ φψᵀ)V as chunked prefix sums, in log-space-exact scales.

    Parameters
    ----------
    phi : ndarray, shape (..., T, F)
        Real query features (the query scales e^{a_i} cancel in each row and are left out).
    psi : ndarray, shape (..., T, F)
        Real key features without their scales.
    b : ndarray, shape (..., T)
        Log key scales ψ(k_j) = e^{b_j} psi_j; −inf for a masked (padding) key.
    v : ndarray, shape (..., T, d_v)
        Values (leading axes broadcast against phi's).
    chunk : int
        Keys per step.

    Returns
    -------
    out : ndarray, shape (..., T, d_v)
        Ô (non-finite in rows whose normaliser is 0).
    normaliser : ndarray, shape (..., T)
        D̂_ii up to the positive factor e^{a_i + m_i} (its sign and finiteness are D̂_ii's).
    m : ndarray, shape (..., T)
        The reference scale of each row, max_{j≤i} b_j (0 before the first visible key).
    """
    t = phi.shape[-2]
    m = np.maximum.accumulate(b, axis=-1)
    m = np.where(np.isfinite(m), m, 0.0)
    lead = np.broadcast_shapes(phi.shape[:-2], v.shape[:-2])
    out = np.empty((*lead, t, v.shape[-1]))
    den = np.empty((*lead, t))
    state = np.zeros((*lead, phi.shape[-1], v.shape[-1]))  # Σ e^{b_j − ref} psi_j v_jᵀ
    total = np.zeros((*phi.shape[:-2], phi.shape[-1]))  # Σ e^{b_j − ref} psi_j
    ref = np.zeros(b.shape[:-1])
    for start in range(0, t, chunk):
        rows = np.arange(start, min(t, start + chunk))
        part = slice(start, rows[-1] + 1)
        f, g, w = phi[..., part, :], psi[..., part, :], v[..., part, :]
        local = (f @ np.swapaxes(g, -1, -2)) * _visible_weights(b[..., part], m[..., part],
                                                                rows - start)  # fmt: skip
        carry = np.exp(np.minimum(ref[..., None] - m[..., part], 0.0))  # (..., C) ≤ 1
        out[..., part, :] = local @ w + (f @ state) * carry[..., None]
        den[..., part] = local.sum(axis=-1) + (f @ total[..., None])[..., 0] * carry
        new = m[..., rows[-1]]
        decay = np.exp(np.minimum(ref - new, 0.0))
        gw = g * np.exp(b[..., part] - new[..., None])[..., None]
        state = state * decay[..., None, None] + np.swapaxes(gw, -1, -2) @ w
        total = total * decay[..., None] + gw.sum(axis=-2)
        ref = new
    with np.errstate(divide="ignore", invalid="ignore"):
        return out / den[..., None], den, m


def estimate_head(
    est: Estimator,
    draw: Draw,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    rows: np.ndarray | None = None,
) -> am.HeadEstimate:
    """Causal Ô, the running normalisers and some rows of D̂⁻¹(M ∘ Â) of one head.

    Parameters
    ----------
    est : Estimator
    draw : Draw
        ``draws`` realisations from ``est.sample``.
    q, k : ndarray, shape (T, d)
    v : ndarray, shape (T, d_v)
    rows : ndarray of int, shape (R,), optional
        Query rows of the matrix to keep (default all).

    Returns
    -------
    metrics.HeadEstimate
        ``out`` (draws, T, d_v), ``normaliser`` (draws, T), ``matrix`` (draws, R, T), zero
        above the diagonal.
    """
    check_square(len(q), len(k))
    fq = est.query_log_features(draw, q)
    fk = est.key_log_features(draw, k)
    phi, psi = am._real_maps(fq.values, fk.values)
    out, den, m = prefix_attention(phi, psi, fk.log_scale, v)
    rows = np.arange(len(q)) if rows is None else rows
    raw = am.scaled_in_place(
        phi[:, rows] @ np.swapaxes(psi, -1, -2), _visible_weights(fk.log_scale, m, rows)
    )
    floor = am.normaliser_floor(est, draw, fq.log_scale, m)
    den_eps = den + floor
    if np.ndim(floor):  # the estimator's ε: Ô = D̂ Ô' / (D̂ + ε)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = out * (den / den_eps)[..., None]
        out = np.where((den == 0)[..., None], 0.0, out)
    with np.errstate(divide="ignore", invalid="ignore"):
        return am.HeadEstimate(out, den, rows, am.divided(raw, den_eps[:, rows, None]))


def draw_metrics(truth: am.HeadTruth, estimate: am.HeadEstimate) -> dict[str, np.ndarray]:
    """:func:`metrics.draw_metrics` in causal form: ``attn_kl`` over the keys each row sees."""
    return am.draw_metrics(truth, estimate, causal_mask(truth.A.shape[1])[estimate.rows])


def uniform_output(v: np.ndarray, t: int) -> np.ndarray:
    """Causal uniform attention's output: row i the mean of v_0..v_i, (t, d_v) from v (t, d_v)."""
    check_square(t, len(v))
    return np.cumsum(v, axis=0) / np.arange(1, t + 1)[:, None]


def uniform_matrix(t: int) -> np.ndarray:
    """Causal uniform attention: U_ij = 1/(i+1) for j ≤ i, else 0; (t, t)."""
    return causal_mask(t) / np.arange(1, t + 1)[:, None]


def _blocks(start: int, stop: int) -> list[tuple[slice, slice]]:
    """Disjoint (rows, columns) blocks of the strictly lower triangle of [start, stop)², each
    fully visible under the causal mask: the lower-left quarter, then both halves recursively."""
    if stop - start < 2:
        return []
    mid = (start + stop) // 2
    return [(slice(mid, stop), slice(start, mid)), *_blocks(start, mid), *_blocks(mid, stop)]


def masked_rank_bound(
    A: np.ndarray, ranks: list[int], measured: np.ndarray | None = None
) -> dict[int, float]:
    """A lower bound on min ‖M ∘ B − A‖_F over rank B ≤ r: every causal estimator with r features.

    On a block that the mask M leaves whole, M ∘ B equals B and has rank ≤ r, so its error there
    is at least the Eckart–Young tail (Σ_{k>r} σ_k²)^½ of A's block; the blocks of
    :func:`_blocks` are disjoint, so their squared tails add up to a lower bound. Restricted to
    the ``measured`` query rows (those of the matrix metrics), each block keeps its measured rows:
    still whole under the mask, still of rank ≤ r, so the bound holds for the measured rows'
    error.

    Parameters
    ----------
    A : ndarray, shape (T, T)
        The causal attention (zero above the diagonal).
    ranks : list of int
    measured : ndarray of int, shape (R,), optional
        Query rows the error is measured on (default all).

    Returns
    -------
    dict
        r -> the bound on ‖M ∘ B − A‖_F over the measured rows (absolute; divide by the norm of
        those rows of A for the relative error).
    """
    keep = np.zeros(len(A), bool)
    keep[np.arange(len(A)) if measured is None else measured] = True
    tails = {r: 0.0 for r in ranks}
    for rows, cols in _blocks(0, len(A)):
        block = A[np.flatnonzero(keep[rows]) + rows.start, cols]
        if min(block.shape) <= min(ranks):
            continue  # every rank ≥ its size: no tail
        sq = np.linalg.svd(block, compute_uv=False) ** 2
        for r in ranks:
            tails[r] += float(sq[r:].sum())
    return {r: float(np.sqrt(tail)) for r, tail in tails.items()}


def head_statistics(q: np.ndarray, k: np.ndarray, truth: am.HeadTruth) -> dict[str, float]:
    """:func:`metrics.head_statistics` of the causal head: the entropy of the masked rows
    (log(i+1) is uniform for row i) and the largest visible logit."""
    stats = am.head_statistics(q, k, truth)
    stats["max_logit"] = float(np.max(np.where(causal_mask(len(q), len(k)), q @ k.T, -np.inf)))
    return stats


def uniform_matrix_metrics(truth: am.HeadTruth, rows: np.ndarray) -> dict[str, float]:
    """:func:`metrics.uniform_matrix_metrics` of causal uniform attention (:func:`uniform_matrix`):
    KL(A_i ‖ U_i) = log(i + 1) + Σ_{j≤i} A_ij log A_ij."""
    sub = truth.A[rows]
    uniform = uniform_matrix(len(truth.A))[rows]
    entropy = np.sum(sub * truth.log_A[rows], axis=1)
    return {
        "attn_rel_frob": np.linalg.norm(uniform - sub) / np.linalg.norm(sub),
        "attn_kl": np.mean(np.log(rows + 1.0) + entropy),
    }


def rank_bound(A: np.ndarray, rows: np.ndarray, ranks: list[int]) -> dict[int, float]:
    """:func:`masked_rank_bound` on the measured ``rows``, relative to their norm: a lower bound on
    ``attn_rel_frob`` of every causal estimator with at most r real features."""
    norm = np.linalg.norm(A[rows])
    return {r: bound / norm for r, bound in masked_rank_bound(A, ranks, rows).items()}


def rank_oracle(A_r: np.ndarray) -> np.ndarray:
    """M ∘ A_r: the masked truncated SVD of A, an achievable causal oracle (not a bound)."""
    return causal_mask(len(A_r)) * A_r


#: the causal forms under the names the attention experiment's rows call (heads.head_rows and
#: heads.baseline_rows's ``forms``)
FORMS = SimpleNamespace(
    HeadTruth=SimpleNamespace(of=head_truth),
    output_errors=am.output_errors,
    uniform_output=uniform_output,
    matrix_rows=am.matrix_rows,
    estimate_head=estimate_head,
    draw_metrics=draw_metrics,
    uniform_matrix_metrics=uniform_matrix_metrics,
    rank_bound=rank_bound,
    rank_oracle=rank_oracle,
    head_statistics=head_statistics,
    BOUND_NOTE="lower bound on the measured rows: Eckart–Young on whole blocks of the masked "
    "matrix (a feature map of width ≤ r; not for local methods)",
    ORACLE_NOTE="oracle: (M ∘ A_r) V, masked (not a bound on output errors)",
)
