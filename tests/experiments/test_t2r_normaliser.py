"""T2R's normaliser is φ(q)ᵀΣφ(k) + ε with ε = 1e-6 in the map's ReLU units, as in the reference
linear-attention code (fast-transformers' LinearAttention, eps=1e-6): a query row where no ReLU
feature is positive gets the output 0 and a finite error, not 0/0 (issue 44 item 7)."""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.experiments.attention import causal
from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.features import registry

EPS = 1e-6


def _draw(log_scale: float):
    est = registry.get("t2r", m=2)
    state = {"Wq": np.eye(2), "bq": np.zeros(2), "Wk": np.eye(2), "bk": np.zeros(2),
             "log_scale": np.array(log_scale), "loss": np.array(0.0)}  # fmt: skip
    return est, est.draw_from_state(state, 2, 1)


def _reference(q, k, v, mask=None):
    """fast-transformers' formula: V' = φ(q)ᵀ Σ_j φ(k_j) v_jᵀ / (φ(q)ᵀ Σ_j φ(k_j) + ε)."""
    fq, fk = np.maximum(q, 0), np.maximum(k, 0)
    g = fq @ fk.T
    if mask is not None:
        g = g * mask
    return (g @ v) / (g.sum(axis=1, keepdims=True) + EPS)


@pytest.mark.parametrize("log_scale", [0.0, 7.5, -30.0])
def test_a_row_without_a_positive_feature_is_finite_and_matches_the_reference(
    log_scale: float,
) -> None:
    """The kernel's constant e^{log_scale} (attention is invariant to it) does not move ε."""
    q = np.array([[1.0, 2.0], [-1.0, -3.0], [1e-4, 0.0], [0.5, -2.0]])
    k = np.array([[0.3, 1.0], [2.0, 0.1], [-1.0, 0.5], [0.2, 0.2]])
    v = np.arange(8.0).reshape(4, 2) - 3.0
    est, draw = _draw(log_scale)
    est_out = am.estimate_head(est, draw, q, k, v).out[0]
    assert np.isfinite(est_out).all()
    np.testing.assert_allclose(est_out, _reference(q, k, v), rtol=1e-9, atol=1e-12)
    assert np.all(est_out[1] == 0.0)  # no positive feature: the output 0
    # ε matters on a row whose normaliser is small: 1e-4 · 0.3 + ... against 1e-6
    assert not np.allclose(est_out[2], v.T @ np.maximum(k[:, 0], 0) / np.maximum(k[:, 0], 0).sum())
    # the causal form: prefix sums with the same ε
    mask = np.tril(np.ones((4, 4)))
    causal_out = causal.estimate_head(est, draw, q, k, v).out[0]
    np.testing.assert_allclose(causal_out, _reference(q, k, v, mask), rtol=1e-9, atol=1e-12)


def test_other_maps_have_no_normaliser_eps() -> None:
    for name in ("positive@iid", "hedgehog"):
        est = registry.get(name, m=2)
        draw = est.sample(np.random.default_rng(0), 2, fit=(np.eye(2), np.eye(2)))
        assert est.normaliser_eps(draw) == 0.0
