"""Attention-level errors of random-feature estimators, and the baselines they are judged against.

Exact A = D⁻¹exp(QKᵀ) and O = AV (Performer, Choromanski et al., 2021, Eq. 1-2); an estimator
gives Â = φ(Q)ψ(K)ᵀ, D̂ = diag(Â1), Ô = D̂⁻¹ÂV, computed in log space (the query scale cancels in
D̂⁻¹Â, key scales are taken relative to their maximum), so no estimate overflows;
docs/experiments.md#attention.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rfbench.compute.features.base import Draw, Estimator


def softmax_attention(
    q: np.ndarray, k: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact row-normalised attention and its logarithm.

    Parameters
    ----------
    q : ndarray, shape (T, d)
    k : ndarray, shape (S, d)
    mask : ndarray of bool, shape (T, S), optional
        The keys each query sees (default all; every row must see one).

    Returns
    -------
    A : ndarray, shape (T, S)
        softmax(qkᵀ) per row over the keys it sees; 0 elsewhere.
    log_A : ndarray, shape (T, S)
        log A where a key is seen, 0 elsewhere (so every A·log A term there is 0).
    """
    logits = q @ k.T if mask is None else np.where(mask, q @ k.T, -np.inf)
    log_a = logits - logits.max(axis=1, keepdims=True)
    log_a -= np.log(np.exp(log_a).sum(axis=1, keepdims=True))
    if mask is None:
        return np.exp(log_a), log_a
    return np.where(mask, np.exp(log_a), 0.0), np.where(mask, log_a, 0.0)


def _real_maps(phi: np.ndarray, psi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Real maps with Re(φψᵀ) = φ'ψ'ᵀ: [Re φ, Im φ] and [Re ψ, −Im ψ] for complex features."""
    if not (np.iscomplexobj(phi) or np.iscomplexobj(psi)):
        return phi, psi
    return (
        np.concatenate([phi.real, phi.imag], axis=-1),
        np.concatenate([psi.real, -psi.imag], axis=-1),
    )


def normaliser_floor(
    est: Estimator, draw: Draw, query_scale: np.ndarray, ref: np.ndarray
) -> np.ndarray | float:
    """The estimator's ε of the normaliser (:meth:`Estimator.normaliser_eps`) in the units of a
    normaliser computed without the query scales e^{a_i} and relative to the key scale e^{ref}:
    ε·e^{−a_i − ref}, (draws, T) (or 0.0 for none)."""
    eps = est.normaliser_eps(draw)
    if not eps:
        return 0.0
    with np.errstate(over="ignore"):
        return np.exp(np.log(eps) - query_scale - ref)


def key_weights(log_scale: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """e^{b_j − max b} per key (0 for masked keys), the key scales relative to the largest.

    Parameters
    ----------
    log_scale : ndarray, shape (..., S)
    mask : ndarray of bool, shape broadcastable to (..., S), optional

    Returns
    -------
    ndarray, shape (..., S)
    """
    b = log_scale if mask is None else np.where(mask, log_scale, -np.inf)
    top = np.max(b, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    return np.exp(b - top)


@dataclass(frozen=True)
class HeadTruth:
    """The exact attention of one head and what every metric compares against.

    Attributes
    ----------
    A, log_A : ndarray, shape (T, S)
    out : ndarray, shape (T, d_v)
        O = AV.
    v : ndarray, shape (S, d_v)
    """

    A: np.ndarray
    log_A: np.ndarray
    out: np.ndarray
    v: np.ndarray

    @classmethod
    def of(cls, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> HeadTruth:
        """The truth of a head from q (T, d), k (S, d), v (S, d_v)."""
        A, log_a = softmax_attention(q, k)
        return cls(A, log_a, A @ v, v)

    @cached_property
    def out_norms(self) -> tuple[float, float]:
        """(Frobenius, spectral) norm of ``out``: computed once, divided into every draw's."""
        return float(np.linalg.norm(self.out)), float(spectral_norm(self.out))

    def at_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(A, log A) on the query ``rows`` and ‖A_rows‖_F, computed once per set of rows."""
        cache = self.__dict__.setdefault("_rows", {})
        key = rows.tobytes()
        if key not in cache:
            A = self.A[rows]
            cache[key] = A, self.log_A[rows], np.linalg.norm(A)
        return cache[key]


def spectral_norm(x: np.ndarray) -> np.ndarray:
    """Largest singular value of each matrix in a batch, via the eigenvalues of the smaller Gram
    matrix (xᵀx is only d_v × d_v: much cheaper than an SVD of the T × d_v matrix).

    Parameters
    ----------
    x : ndarray, shape (..., T, d_v)

    Returns
    -------
    ndarray, shape (...)
    """
    gram = np.swapaxes(x, -1, -2) @ x
    return np.sqrt(np.maximum(np.linalg.eigvalsh(gram)[..., -1], 0.0))


def output_errors(truth: HeadTruth, out_hat: np.ndarray) -> dict[str, np.ndarray]:
    """Relative Frobenius and spectral errors of outputs.

    Parameters
    ----------
    truth : HeadTruth
    out_hat : ndarray, shape (draws, T, d_v)

    Returns
    -------
    dict
        ``out_rel_frob`` and ``out_rel_spec``, each (draws,); non-finite where ``out_hat`` is.
    """
    frob, spec = truth.out_norms
    err = out_hat - truth.out
    finite = np.isfinite(err).all(axis=(-2, -1))
    safe = err if finite.all() else np.where(finite[:, None, None], err, 0.0)
    spec_err = spectral_norm(safe) / spec
    return {
        "out_rel_frob": np.where(finite, np.linalg.norm(safe, axis=(-2, -1)) / frob, np.inf),
        "out_rel_spec": np.where(finite, spec_err, np.inf),
    }


@dataclass(frozen=True)
class HeadEstimate:
    """One estimator's attention of one head, per draw.

    Attributes
    ----------
    out : ndarray, shape (draws, T, d_v)
        Ô = D̂⁻¹ÂV, computed in linear time as D̂⁻¹φ(Q)(ψ(K)ᵀV).
    normaliser : ndarray, shape (draws, T)
        D̂_ii up to a positive factor, before the estimator's ε (:func:`normaliser_floor`).
        D̂_ii up to a positive factor per row (sign and finiteness are those of D̂_ii).
    rows : ndarray of int, shape (R,)
        The query rows of ``matrix``.
    matrix : ndarray, shape (draws, R, S)
        Those rows of D̂⁻¹Â.
    """

    out: np.ndarray
    normaliser: np.ndarray
    rows: np.ndarray
    matrix: np.ndarray


def matrix_rows(t: int, limit: int) -> np.ndarray:
    """``limit`` evenly spaced query rows of T (all rows if T ≤ limit): (R,) int."""
    if t <= limit:
        return np.arange(t)
    return np.unique(np.linspace(0, t - 1, limit).round().astype(int))


def estimate_head(
    est: Estimator,
    draw: Draw,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    rows: np.ndarray | None = None,
) -> HeadEstimate:
    """Ô, the normalisers and some rows of D̂⁻¹Â of one head (log-space exact, see module).

    Parameters
    ----------
    est : Estimator
    draw : Draw
        ``draws`` realisations from ``est.sample``.
    q : ndarray, shape (T, d)
    k : ndarray, shape (S, d)
    v : ndarray, shape (S, d_v)
    rows : ndarray of int, shape (R,), optional
        Query rows of the matrix D̂⁻¹Â to keep (default all): the quadratic part of the cost.

    Returns
    -------
    HeadEstimate
    """
    fq = est.query_log_features(draw, q)
    fk = est.key_log_features(draw, k)
    phi, psi = _real_maps(fq.values, fk.values)
    psi = psi * key_weights(fk.log_scale)[..., None]
    den = phi @ psi.sum(axis=1)[..., None]  # (draws, T, 1)
    num = phi @ (np.swapaxes(psi, -1, -2) @ v)
    rows = np.arange(len(q)) if rows is None else rows
    raw = phi[:, rows] @ np.swapaxes(psi, -1, -2)
    top = np.max(fk.log_scale, axis=-1, keepdims=True)
    floor = normaliser_floor(est, draw, fq.log_scale, np.where(np.isfinite(top), top, 0.0))
    den_eps = den + np.asarray(floor)[..., None] if np.ndim(floor) else den
    with np.errstate(divide="ignore", invalid="ignore"):
        out, matrix = divided(num, den_eps), divided(raw, den_eps[:, rows])
    return HeadEstimate(out, den[..., 0], rows, matrix)


def _in_place(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether x op y fits x: its dtype and shape hold the result."""
    return np.result_type(x, y) == x.dtype and np.broadcast_shapes(x.shape, y.shape) == x.shape


def divided(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x / y, written into x (a fresh product the caller gives up) where it fits."""
    if not _in_place(x, y):
        return x / y
    x /= y
    return x


def scaled_in_place(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x · y, written into x (a fresh product the caller gives up) where it fits."""
    if not _in_place(x, y):
        return x * y
    x *= y
    return x


def draw_metrics(
    truth: HeadTruth, estimate: HeadEstimate, seen: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Every per-draw metric of one head.

    Parameters
    ----------
    truth : HeadTruth
    estimate : HeadEstimate
        From :func:`estimate_head`.
    seen : ndarray of bool, shape (R, S), optional
        The keys each kept row sees (default all; causal: the mask's rows): ``attn_kl`` is over
        those, a row being a distribution when its seen entries are positive.

    Returns
    -------
    dict of ndarray, each (draws,)
        ``out_rel_frob``, ``out_rel_spec``: ‖Ô − O‖/‖O‖ (inf if some row of Ô is not finite);
        ``attn_rel_frob``: ‖D̂⁻¹Â − A‖_F/‖A‖_F over the kept rows (inf likewise); ``attn_kl``:
        mean over the kept rows of KL(A_i ‖ Â_i) where Â_i is a distribution with positive
        entries (nan if no row is); ``kl_rows``: the fraction of such rows; ``bad_normaliser``:
        the fraction of all rows with D̂_ii ≤ 0 or not finite.
    """
    metrics = output_errors(truth, estimate.out)
    A, log_a, norm_a = truth.at_rows(estimate.rows)
    A_hat, den = estimate.matrix, estimate.normaliser
    # the masks below are applied only where they mask something: the same values, fewer passes
    err = A_hat - A
    finite = np.isfinite(err).all(axis=(-2, -1))
    if not finite.all():
        err = np.where(finite[:, None, None], err, 0.0)
    frob = np.linalg.norm(err, axis=(-2, -1))
    metrics["attn_rel_frob"] = np.where(finite, frob / norm_a, np.inf)
    bad = ~(np.isfinite(den) & (den > 0))
    metrics["bad_normaliser"] = bad.mean(axis=-1)
    positive = A_hat > 0
    if seen is not None:
        positive |= ~seen
    valid = ~bad[:, estimate.rows] & np.all(positive, axis=-1)  # (draws, R)
    take = valid[..., None] if seen is None else valid[..., None] & seen
    with np.errstate(divide="ignore", invalid="ignore"):
        log_hat = np.log(A_hat if take.all() else np.where(take, A_hat, 1.0))
    np.subtract(log_a, log_hat, out=log_hat)
    log_hat *= A  # A (log A − log Â)
    if seen is not None:
        np.copyto(log_hat, 0.0, where=~seen)
    kl_rows = np.sum(log_hat, axis=-1)  # (draws, R)
    count = valid.sum(axis=-1)
    with np.errstate(invalid="ignore"):
        metrics["attn_kl"] = np.where(count > 0, np.sum(kl_rows * valid, axis=-1) / count, np.nan)
    metrics["kl_rows"] = valid.mean(axis=-1)
    return metrics


def uniform_output(v: np.ndarray, t: int) -> np.ndarray:
    """Uniform attention's output: every row the mean of the values, (t, d_v) from v (S, d_v)."""
    return np.broadcast_to(v.mean(axis=0), (t, v.shape[1]))


def best_rank(A: np.ndarray, ranks: list[int]) -> dict[int, np.ndarray]:
    """The best rank-r approximations of A in Frobenius and spectral norm (Eckart–Young).

    Parameters
    ----------
    A : ndarray, shape (T, S)
    ranks : list of int

    Returns
    -------
    dict
        r -> A_r of shape (T, S) (A itself when r ≥ rank A).
    """
    u, s, vt = np.linalg.svd(A, full_matrices=False)
    return {r: (u[:, :r] * s[:r]) @ vt[:r] for r in ranks}


#: the notes of the best-rank rows: the bound on ``attn_rel_frob`` and the output oracle
BOUND_NOTE = (
    "oracle: best rank-r approximation of the measured rows of A (a lower bound for a feature "
    "map of width ≤ r; not for local methods)"
)
ORACLE_NOTE = "oracle: A_r V (not a bound on output errors)"


def rank_oracle(A_r: np.ndarray) -> np.ndarray:
    """The best rank-r matrix as the output oracle uses it (the causal form masks it)."""
    return A_r


def rank_bound(A: np.ndarray, rows: np.ndarray, ranks: list[int]) -> dict[int, float]:
    """The floor of ``attn_rel_frob`` on the measured rows: ‖(A_R)_r − A_R‖_F/‖A_R‖_F.

    Any feature map of width r gives a row-normalised D̂⁻¹Â of rank ≤ r, so its rows R have rank
    ≤ r too, and no such estimate is closer to A_R than the best rank-r approximation of A_R
    (Eckart–Young): √(Σ_{i>r} σ_i²)/√(Σ_i σ_i²) over the singular values σ of A_R; 0 once r ≥ |R|.

    Parameters
    ----------
    A : ndarray, shape (T, S)
    rows : ndarray of int, shape (R,)
        The query rows of the matrix metrics (:func:`matrix_rows`).
    ranks : list of int

    Returns
    -------
    dict
        r -> the bound.
    """
    sq = np.linalg.svd(A[rows], compute_uv=False) ** 2
    tail = np.concatenate([np.cumsum(sq[::-1])[::-1], [0.0]])  # tail[r] = Σ_{i ≥ r} σ_i²
    return {r: float(np.sqrt(tail[min(r, sq.size)] / tail[0])) for r in ranks}


def uniform_matrix_metrics(truth: HeadTruth, rows: np.ndarray) -> dict[str, float]:
    """``attn_rel_frob`` and ``attn_kl`` of uniform attention (1/S per entry) on ``rows``.

    Parameters
    ----------
    truth : HeadTruth
    rows : ndarray of int, shape (R,)

    Returns
    -------
    dict
        ‖U − A_R‖_F/‖A_R‖_F and the mean over R of KL(A_i ‖ U_i) = log S − H(A_i).
    """
    A, log_a = truth.A[rows], truth.log_A[rows]
    s = A.shape[1]
    return {
        "attn_rel_frob": float(np.linalg.norm(A - 1.0 / s) / np.linalg.norm(A)),
        "attn_kl": float(np.mean(np.log(s) + np.sum(A * log_a, axis=1))),
    }


def head_statistics(q: np.ndarray, k: np.ndarray, truth: HeadTruth) -> dict[str, float]:
    """Context for one head: exact attention entropy and Q/K statistics.

    Parameters
    ----------
    q : ndarray, shape (T, d)
    k : ndarray, shape (S, d)
    truth : HeadTruth

    Returns
    -------
    dict
        ``attn_entropy`` (mean row entropy in nats; log S is uniform attention),
        ``q_norm_q50``/``q_norm_q95``/``q_norm_max`` and the same for k, ``max_logit``
        (max qᵀk), ``q_anisotropy``/``k_anisotropy`` (largest eigenvalue of the second-moment
        matrix over its trace: 1/d for isotropic inputs, 1 for inputs on a line; left out for
        all-zero inputs, where it is 0/0).
    """
    stats = {
        "attn_entropy": float(-np.mean(np.sum(truth.A * truth.log_A, axis=1))),
        "max_logit": float(np.max(q @ k.T)),
    }
    for name, x in (("q", q), ("k", k)):
        norms = np.linalg.norm(x, axis=1)
        stats[f"{name}_norm_q50"] = float(np.quantile(norms, 0.5))
        stats[f"{name}_norm_q95"] = float(np.quantile(norms, 0.95))
        stats[f"{name}_norm_max"] = float(norms.max())
        if np.any(x):  # of all-zero x undefined (0/0): no row
            scaled = np.ldexp(x, -int(np.frexp(np.max(np.abs(x)))[1]))  # exact, scale-free
            eig = np.linalg.eigvalsh(scaled.T @ scaled)
            stats[f"{name}_anisotropy"] = float(eig[-1] / eig.sum())
    return stats
