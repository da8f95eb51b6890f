"""The attention experiment under ``--causal``: its jobs (:func:`point`), per-draw forms
(:data:`FORMS`), baseline rows and swap-in attention; the math is
rfbench.compute.experiments.attention.causal (docs/experiments.md#causal-attention).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rfbench.compute.experiments import ConfigError
from rfbench.compute.experiments.attention import causal
from rfbench.compute.experiments.attention import data as source
from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.results import BOOL, register_parameter

register_parameter("causal", BOOL)

#: the causal forms of the heads jobs (heads.head_rows's ``am``)
FORMS = causal.FORMS


def validate(config: Mapping[str, Any]) -> None:
    """A causal run on the user's heads needs as many keys as queries (one ConfigError line)."""
    if config["causal"] and config["data"]:
        q, k, _ = source.load_qkv(config["data"])
        if q.shape[1] != k.shape[1]:
            raise ConfigError(
                f"--causal needs as many keys as queries: {config['data']} has {q.shape[1]} "
                f"queries and {k.shape[1]} keys per head"
            )


def point(config: Mapping[str, Any], label: str) -> dict[str, Any]:
    """The job parameters a causal run adds ({} for a bidirectional run, whose jobs and seeds
    stay as they were)."""
    return {"causal": True, "dataset": f"{label}+causal"} if config["causal"] else {}


def baseline_rows(
    base: dict[str, Any],
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    budgets: list[int],
    measured: np.ndarray,
) -> list[dict[str, Any]]:
    """Uniform (running mean), zero and masked-rank baselines of one causal head, plus its
    statistics: heads.baseline_rows in causal form, the matrix metrics on the ``measured``
    query rows (those of every estimator's), outputs on all rows.

    The ``best-rank`` ``attn_rel_frob`` rows are :func:`causal.masked_rank_bound` on the measured
    rows at r = each feature budget, a lower bound on every causal estimator with at most r real
    features (``bound`` True); the output rows use M ∘ A_r, the masked truncated SVD of A (an
    achievable causal oracle, not a bound).
    """
    truth = causal.head_truth(q, k, v)
    t = len(q)
    rows = []

    def row(estimator: str, metric: str, value: float, **extra: Any) -> None:
        rows.append({**base, "estimator": estimator, "metric": metric, "value": float(value),
                     "stderr": None, "n_trials": 0, **extra})  # fmt: skip

    sub = truth.A[measured]
    norm_a = np.linalg.norm(sub)
    errs = am.output_errors(truth, causal.uniform_output(v, t)[None])
    for metric, value in errs.items():
        row("uniform", metric, value[0])
    uniform = causal.uniform_matrix(t)[measured]
    row("uniform", "attn_rel_frob", np.linalg.norm(uniform - sub) / norm_a)
    # KL(A_i ‖ U_i) = log(i + 1) + Σ_j A_ij log A_ij over the keys j ≤ i
    entropy = np.sum(sub * truth.log_A[measured], axis=1)
    row("uniform", "attn_kl", np.mean(np.log(measured + 1.0) + entropy))
    row("zero", "out_rel_frob", 1.0)
    row("zero", "out_rel_spec", 1.0)
    ranks = sorted(set(budgets))
    mask = causal.causal_mask(t)
    note = "lower bound on the measured rows: Eckart–Young on whole blocks of the masked matrix "
    note += "(a feature map of width ≤ r; not for local methods)"
    for r, bound in causal.masked_rank_bound(truth.A, ranks, measured).items():
        row("best-rank", "attn_rel_frob", bound / norm_a, rank=r, budget=r, features=r,
            bound=True, note=note)  # fmt: skip
    for r, A_r in am.best_rank(truth.A, ranks).items():
        out = am.output_errors(truth, ((mask * A_r) @ v)[None])
        for metric, value in out.items():
            row("best-rank", metric, value[0], rank=r, budget=r, features=r, bound=False,
                note="oracle: (M ∘ A_r) V, masked (not a bound on output errors)")  # fmt: skip
    for metric, value in causal.head_statistics(q, k, truth).items():
        row("exact", metric, value)
    return rows


def uniform_attention(
    layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray
) -> np.ndarray:
    """Causal uniform attention in the encoder: output i the mean of the unmasked values 0..i.

    Parameters
    ----------
    layer : int
        Unused (the AttentionFn signature).
    q, k, v : ndarray, shape (B, heads, T, d_head)
    mask : ndarray of bool, shape (B, T)

    Returns
    -------
    ndarray, shape (B, heads, T, d_head)
    """
    w = mask[:, None, :, None].astype(v.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.cumsum(v * w, axis=2) / np.cumsum(w, axis=2)
