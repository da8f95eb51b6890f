"""Causal attention: every causal form against a direct masked dense computation.

The references below are written out row by row (a query i and its keys 0..i) or as the full
masked matrix, never through rfbench.compute.experiments.attention.causal's prefix sums.
"""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.experiments.attention import causal
from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.features import registry


def head(rng: np.random.Generator, t: int = 23, d: int = 6, dv: int = 5):
    q = 0.6 * rng.normal(size=(t, d))
    k = 0.6 * rng.normal(size=(t, d))
    v = rng.normal(size=(t, dv))
    return q, k, v


def dense_linear(phi, psi, b, v):
    """The masked dense product M ∘ (φ ψᵀ) with global key scales, row-normalised, and its
    normalisers: the definition, with no prefix sums."""
    w = np.exp(b - b.max(axis=-1, keepdims=True))
    raw = (phi @ np.swapaxes(psi * w[..., None], -1, -2)) * causal.causal_mask(phi.shape[-2])
    den = raw.sum(axis=-1)
    return raw / den[..., None], (raw / den[..., None]) @ v, den


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_prefix_sums_equal_the_masked_dense_product(rng, chunk) -> None:
    draws, t, f, dv = 3, 29, 8, 4
    phi = rng.normal(size=(draws, t, f))  # signed features: no positivity to hide errors
    psi = rng.normal(size=(draws, t, f))
    b = 8.0 * rng.normal(size=(draws, t))  # key scales spread over e^±20
    v = rng.normal(size=(t, dv))  # broadcast over the draws
    out, den, m = causal.prefix_attention(phi, psi, b, v, chunk=chunk)
    _, want_out, want_den = dense_linear(phi, psi, b, v)
    np.testing.assert_allclose(out, want_out, rtol=1e-9, atol=1e-9 * np.abs(want_out).max())
    # the normaliser up to the positive factor of the row's reference scale
    np.testing.assert_allclose(m, np.maximum.accumulate(b, axis=-1))
    scaled = den * np.exp(m - b.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(scaled, want_den, rtol=1e-9, atol=1e-12)


def test_an_early_row_does_not_underflow_beside_a_large_later_key() -> None:
    """Row 0 sees key 0 only; a key scale 1000 nats below a later one underflows relative to the
    global maximum (the dense normaliser is 0), but not relative to the keys seen so far."""
    t = 4
    phi = np.ones((1, t, 2))
    psi = np.ones((1, t, 2))
    b = np.array([[-1000.0, 0.0, 0.0, 0.0]])
    v = np.arange(t, dtype=float)[:, None] + 1
    out, den, _ = causal.prefix_attention(phi, psi, b, v, chunk=2)
    with np.errstate(invalid="ignore"):
        assert dense_linear(phi, psi, b, v)[2][0, 0] == 0.0
    assert den[0, 0] > 0 and out[0, 0, 0] == pytest.approx(1.0)
    np.testing.assert_allclose(out[0, 1:, 0], [2.0, 2.5, 3.0], rtol=1e-12)


def test_padding_keys_weigh_nothing(rng) -> None:
    q, k, v = head(rng, t=10)
    phi, psi = np.exp(q @ rng.normal(size=(6, 8))), np.exp(k @ rng.normal(size=(6, 8)))
    b = np.zeros(10)
    b[7:] = -np.inf  # the last 3 keys are padding
    out, _, _ = causal.prefix_attention(phi, psi, b, v, chunk=4)
    short, _, _ = causal.prefix_attention(phi[:7], psi[:7], b[:7], v[:7], chunk=4)
    np.testing.assert_allclose(out[:7], short, rtol=1e-12)
    raw = phi[7:] @ psi[:7].T  # the padded rows see the 7 real keys only
    np.testing.assert_allclose(out[7:], (raw @ v[:7]) / raw.sum(axis=1, keepdims=True))


def test_exact_causal_attention_is_the_softmax_of_each_prefix(rng) -> None:
    q, k, v = head(rng)
    truth = causal.head_truth(q, k, v)
    for i in (0, 1, 11, len(q) - 1):
        logits = q[i] @ k[: i + 1].T
        row = np.exp(logits - logits.max())
        row /= row.sum()
        np.testing.assert_allclose(truth.A[i, : i + 1], row, rtol=1e-12)
        assert not truth.A[i, i + 1 :].any() and not truth.log_A[i, i + 1 :].any()
        np.testing.assert_allclose(truth.out[i], row @ v[: i + 1], rtol=1e-12)
    np.testing.assert_allclose(truth.log_A[truth.A > 0], np.log(truth.A[truth.A > 0]))


@pytest.mark.parametrize("name", ["positive@iid", "trig@orf", "hyperbolic@iid", "complex-exp@iid"])
def test_estimated_head_equals_the_masked_dense_estimate(rng, name) -> None:
    q, k, v = head(rng, t=40)
    est = registry.get(name, kernel="softmax", m=16)
    draw = est.sample(rng, d=q.shape[1], draws=3, fit=(q, k))
    rows = np.array([0, 5, 17, 39])
    got = causal.estimate_head(est, draw, q, k, v, rows)
    fq, fk = est.query_log_features(draw, q), est.key_log_features(draw, k)
    phi, psi = am._real_maps(fq.values, fk.values)
    matrix, out, den = dense_linear(phi, psi, fk.log_scale, v)
    np.testing.assert_allclose(got.out, out, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got.matrix, matrix[:, rows], rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(np.sign(got.normaliser), np.sign(den))


def test_causal_metrics_equal_a_row_by_row_computation(rng) -> None:
    q, k, v = head(rng, t=12)
    truth = causal.head_truth(q, k, v)
    est = registry.get("trig@iid", kernel="softmax", m=4)  # signed: some rows are no distribution
    draw = est.sample(rng, d=q.shape[1], draws=5)
    rows = np.array([0, 3, 8, 11])
    estimate = causal.estimate_head(est, draw, q, k, v, rows)
    got = causal.draw_metrics(truth, estimate)
    for i in range(5):
        kls, valid = [], 0
        for r, row in enumerate(rows):
            a, a_hat = truth.A[row, : row + 1], estimate.matrix[i, r, : row + 1]
            if estimate.normaliser[i, row] > 0 and np.all(a_hat > 0):
                kls.append(np.sum(a * np.log(a / a_hat)))
                valid += 1
        assert got["kl_rows"][i] == valid / len(rows)
        if kls:
            assert got["attn_kl"][i] == pytest.approx(np.mean(kls), rel=1e-10)
        else:
            assert np.isnan(got["attn_kl"][i])
        assert not np.any(estimate.matrix[i][np.arange(12)[None, :] > rows[:, None]])
        err = estimate.matrix[i] - truth.A[rows]
        want = np.linalg.norm(err) / np.linalg.norm(truth.A[rows])
        assert got["attn_rel_frob"][i] == pytest.approx(want, rel=1e-10)
        out_err = np.linalg.norm(estimate.out[i] - truth.out) / np.linalg.norm(truth.out)
        assert got["out_rel_frob"][i] == pytest.approx(out_err, rel=1e-10)
    assert 0 < got["kl_rows"].mean() < 1  # both kinds of row occur


def test_a_positive_map_has_every_row_a_distribution(rng) -> None:
    q, k, v = head(rng, t=12)
    truth = causal.head_truth(q, k, v)
    est = registry.get("positive@iid", kernel="softmax", m=64)
    estimate = causal.estimate_head(est, est.sample(rng, d=q.shape[1], draws=4), q, k, v)
    got = causal.draw_metrics(truth, estimate)
    assert np.all(got["kl_rows"] == 1) and np.all(got["bad_normaliser"] == 0)
    kl = [
        np.mean(
            [
                np.sum(truth.A[i, : i + 1] * np.log(truth.A[i, : i + 1] / m[i, : i + 1]))
                for i in range(12)
            ]
        )
        for m in estimate.matrix
    ]
    np.testing.assert_allclose(got["attn_kl"], kl, rtol=1e-10)


def test_causal_uniform_attention_is_the_running_mean(rng) -> None:
    _, _, v = head(rng, t=9)
    out = causal.uniform_output(v, 9)
    for i in range(9):
        np.testing.assert_allclose(out[i], v[: i + 1].mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(causal.uniform_matrix(9) @ v, out, rtol=1e-12)


def test_masked_rank_bound_is_eckart_young_on_whole_blocks(rng) -> None:
    A = causal.head_truth(*head(rng, t=4)).A
    # T = 4: the one block of size > 1 is rows 2..3 × columns 0..1
    sigma = np.linalg.svd(A[2:, :2], compute_uv=False)
    assert causal.masked_rank_bound(A, [1])[1] == pytest.approx(sigma[1], rel=1e-12)


def test_masked_rank_bound_is_below_every_masked_rank_r_matrix(rng) -> None:
    t, r = 32, 3
    truth = causal.head_truth(*head(rng, t=t))
    bound = causal.masked_rank_bound(truth.A, [r])[r]
    assert bound > 0
    # candidates M ∘ B with rank B ≤ r: the truncated SVD of A, masked, and random ones
    u, s, vt = np.linalg.svd(truth.A)
    mask = causal.causal_mask(t)
    candidates = [mask * ((u[:, :r] * s[:r]) @ vt[:r])]
    candidates += [mask * (rng.normal(size=(t, r)) @ rng.normal(size=(r, t))) for _ in range(5)]
    for c in candidates:
        assert bound <= np.linalg.norm(c - truth.A)
    # zero for a matrix that is itself M ∘ (rank r), positive one rank lower
    low = mask * (rng.normal(size=(t, r)) @ rng.normal(size=(r, t)))
    got = causal.masked_rank_bound(low, [r - 1, r])
    assert got[r] < 1e-12 and got[r - 1] > 1e-3


def test_max_logit_is_over_the_visible_keys() -> None:
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[0.0, 1.0], [5.0, 0.0]])  # q0·k1 = 5 is not visible from row 0
    stats = causal.head_statistics(q, k, causal.head_truth(q, k, np.eye(2)))
    assert stats["max_logit"] == 1.0


def test_causal_needs_as_many_keys_as_queries(rng) -> None:
    q, k, v = head(rng, t=5)
    with pytest.raises(ValueError, match="as many keys as queries"):
        causal.head_truth(q, k[:4], v[:4])
