"""Attention-level metrics, baselines and the swap-in attention, on synthetic heads (no model)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.experiments.attention.heads import _mean_se, _z
from rfbench.compute.experiments.attention.heads import baseline_rows as _baseline_rows
from rfbench.compute.experiments.attention.swap import random_feature_attention, uniform_attention
from rfbench.compute.features import registry
from rfbench.compute.models.bert import exact_attention


def head(t: int = 12, s: int = 12, d: int = 6, dv: int = 4, scale: float = 0.25, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (scale * rng.standard_normal((t, d)), scale * rng.standard_normal((s, d)),
            rng.standard_normal((s, dv)))  # fmt: skip


def test_softmax_attention_is_row_normalised_exp() -> None:
    q, k, _ = head()
    A, log_a = am.softmax_attention(q, k)
    K = np.exp(q @ k.T)
    np.testing.assert_allclose(A, K / K.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_a), A, rtol=1e-12)


@pytest.mark.parametrize("name", ["positive@iid", "hyperbolic@orf", "trig@iid", "gerf@orf"])
def test_log_space_attention_equals_the_direct_estimate(name: str) -> None:
    q, k, v = head(scale=0.5)
    est = registry.get(name, m=32)
    draw = est.sample(np.random.default_rng(1), d=6, draws=3, fit=(q, k))
    got = am.estimate_head(est, draw, q, k, v)
    A_hat, den = got.matrix, got.normaliser
    K_hat = est.estimate(draw, q, k)
    np.testing.assert_allclose(A_hat, K_hat / K_hat.sum(axis=-1, keepdims=True), rtol=1e-9)
    assert np.array_equal(np.sign(den), np.sign(K_hat.sum(axis=-1)))


@pytest.mark.parametrize("name", ["positive@orf", "trig@iid"])
def test_linear_time_output_and_kept_rows_equal_the_quadratic_form(name: str) -> None:
    q, k, v = head(t=30, s=20, scale=0.6)
    est = registry.get(name, m=16)
    draw = est.sample(np.random.default_rng(6), d=6, draws=3)
    K_hat = est.estimate(draw, q, k)  # the quadratic form
    A_hat = K_hat / K_hat.sum(axis=-1, keepdims=True)
    full = am.estimate_head(est, draw, q, k, v)
    rows = am.matrix_rows(30, 7)
    assert len(rows) == 7 and rows[0] == 0 and rows[-1] == 29
    got = am.estimate_head(est, draw, q, k, v, rows)
    np.testing.assert_allclose(got.out, A_hat @ v, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(full.matrix, A_hat, rtol=1e-9)
    np.testing.assert_allclose(got.matrix, full.matrix[:, rows], rtol=1e-12)
    np.testing.assert_allclose(got.normaliser, full.normaliser, rtol=1e-12)
    assert list(am.matrix_rows(5, 7)) == [0, 1, 2, 3, 4]


def test_huge_logits_stay_exact_in_log_space() -> None:
    # logits of ~ 2000 overflow exp; positive features still give a proper distribution
    q, k, v = head(scale=20.0)
    assert np.max(q @ k.T) > 710  # exp overflows float64
    est = registry.get("positive@iid", m=64)
    draw = est.sample(np.random.default_rng(2), d=6, draws=4)
    K_hat = est.estimate(draw, q, k)  # every entry underflows: 0/0 when normalised directly
    with np.errstate(invalid="ignore"):
        assert not np.isfinite(K_hat / K_hat.sum(axis=-1, keepdims=True)).all()
    got = am.estimate_head(est, draw, q, k, v)
    A_hat, den = got.matrix, got.normaliser
    assert np.isfinite(A_hat).all() and (den > 0).all()
    np.testing.assert_allclose(A_hat.sum(axis=-1), 1.0, rtol=1e-12)
    truth = am.HeadTruth.of(q, k, v)
    metrics = am.draw_metrics(truth, am.estimate_head(est, draw, q, k, v))
    assert (metrics["bad_normaliser"] == 0).all() and np.isfinite(metrics["out_rel_frob"]).all()


def predicted_output_mse(q, k, v, m: int) -> float:
    """Delta-method E‖Ô − O‖²_F for positive@iid (first order in 1/m):
    Ô_i − O_i ≈ D_i⁻¹ Σ_j (Â_ij − K_ij)(v_j − O_i), and for positive features
    E[f(ω,q)² f(ω,k) f(ω,k')] = exp(−‖q‖² − (‖k‖² + ‖k'‖²)/2 + ‖2q + k + k'‖²/2)."""
    K = np.exp(q @ k.T)
    D = K.sum(axis=1)
    O = (K / D[:, None]) @ v
    total = 0.0
    for i in range(len(q)):
        u = v - O[i]
        sq_k = np.sum(k**2, axis=1)
        s = q[i] + k
        mixed = -np.sum(q[i] ** 2) - (sq_k[:, None] + sq_k[None]) / 2
        mixed += (np.sum(s**2, axis=1)[:, None] + np.sum(s**2, axis=1)[None] + 2 * s @ s.T) / 2
        M = np.exp(mixed) - np.outer(K[i], K[i])
        total += np.sum(M * (u @ u.T)) / (m * D[i] ** 2)
    return float(total)


def test_output_error_matches_the_delta_method() -> None:
    q, k, v = head()
    m, draws = 512, 600
    est = registry.get("positive@iid", m=m)
    truth = am.HeadTruth.of(q, k, v)
    draw = est.sample(np.random.default_rng(3), d=6, draws=draws)
    metrics = am.draw_metrics(truth, am.estimate_head(est, draw, q, k, v))
    err_sq = (metrics["out_rel_frob"] * np.linalg.norm(truth.out)) ** 2
    expected = predicted_output_mse(q, k, v, m)
    se = err_sq.std(ddof=1) / np.sqrt(draws)
    assert 4 * se < expected / 2  # a factor-2 error in the estimate cannot pass
    assert abs(err_sq.mean() - expected) < 4 * se + 0.05 * expected  # O(1/m²) delta-method bias


def test_draw_metrics_of_exact_and_broken_estimates() -> None:
    q, k, v = head()
    truth = am.HeadTruth.of(q, k, v)
    rows = np.arange(12)

    def estimate(matrix, den):
        return am.HeadEstimate(matrix @ v, den, rows, matrix)

    perfect = am.draw_metrics(truth, estimate(truth.A[None], np.ones((1, 12))))
    for key in ("out_rel_frob", "out_rel_spec", "attn_rel_frob", "attn_kl", "bad_normaliser"):
        assert perfect[key][0] == pytest.approx(0.0, abs=1e-12), key
    assert perfect["kl_rows"][0] == 1.0
    broken = truth.A.copy()[None]
    den = np.ones((1, 12))
    den[0, 3], den[0, 5] = -0.5, np.inf
    broken[0, 3] *= -1
    got = am.draw_metrics(truth, estimate(broken, den))
    assert got["bad_normaliser"][0] == pytest.approx(2 / 12)
    assert got["kl_rows"][0] == pytest.approx(10 / 12)  # KL over the other rows only
    assert got["attn_kl"][0] == pytest.approx(0.0, abs=1e-12)
    # row 3 negated: ‖Ô − O‖_F = 2‖O_3‖ exactly
    expect = 2 * np.linalg.norm(truth.out[3]) / np.linalg.norm(truth.out)
    assert got["out_rel_frob"][0] == pytest.approx(expect, rel=1e-12)


def test_baselines_equal_independent_computations() -> None:
    """Outputs on all rows; matrix metrics and the rank bound on the measured rows only."""
    q, k, v = head(t=10, s=14, scale=0.8)
    base = {"kind": "baselines"}
    measured = np.array([0, 3, 5, 6, 9])
    rows = {(r["estimator"], r["metric"], r.get("rank")): r["value"]
            for r in _baseline_rows(base, q, k, v, [2, 4, 5], measured)}  # fmt: skip
    logits = q @ k.T
    A = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    O = A @ v
    U = np.tile(v.mean(axis=0), (10, 1))
    assert rows["uniform", "out_rel_frob", None] == pytest.approx(
        np.sqrt(((U - O) ** 2).sum() / (O**2).sum()), rel=1e-12
    )
    assert rows["uniform", "out_rel_spec", None] == pytest.approx(
        np.linalg.svd(U - O, compute_uv=False)[0] / np.linalg.svd(O, compute_uv=False)[0]
    )
    kl = np.mean([stats.entropy(A[i], np.full(14, 1 / 14)) for i in measured])
    assert rows["uniform", "attn_kl", None] == pytest.approx(kl, rel=1e-10)
    sub = A[measured]
    assert rows["uniform", "attn_rel_frob", None] == pytest.approx(
        np.linalg.norm(sub - 1 / 14) / np.linalg.norm(sub), rel=1e-12
    )
    assert rows["zero", "out_rel_frob", None] == 1.0
    sv = np.linalg.svd(sub, compute_uv=False)
    for r in (2, 4):  # Eckart–Young on the measured rows: the tail of their singular values
        tail = np.sqrt(np.sum(sv[r:] ** 2)) / np.sqrt(np.sum(sv**2))
        assert rows["best-rank", "attn_rel_frob", r] == pytest.approx(tail, rel=1e-9)
    assert rows["best-rank", "attn_rel_frob", 5] == 0.0  # rank ≥ the 5 measured rows: floor 0
    full = np.linalg.svd(A, full_matrices=False)  # the output oracle A_r V uses all rows
    a2 = (full[0][:, :2] * full[1][:2]) @ full[2][:2]
    assert rows["best-rank", "out_rel_frob", 2] == pytest.approx(
        np.linalg.norm(a2 @ v - O) / np.linalg.norm(O), rel=1e-9
    )
    entropy = np.mean([stats.entropy(A[i]) for i in range(10)])
    assert rows["exact", "attn_entropy", None] == pytest.approx(entropy, rel=1e-10)
    assert rows["exact", "max_logit", None] == pytest.approx(logits.max())


def test_z_against_uniform() -> None:
    errors = np.array([0.4, 0.5, 0.6, 0.5])
    se = errors.std(ddof=1) / 2
    assert _z(0.9, errors) == pytest.approx(0.4 / se)
    assert _z(0.3, errors) < 0
    assert _z(0.9, np.array([0.4, np.inf])) == -np.inf


def test_linear_time_swap_attention_equals_the_quadratic_form() -> None:
    rng = np.random.default_rng(4)
    b, heads, t, d = 2, 3, 7, 6
    q, k, v = (0.4 * rng.standard_normal((b, heads, t, d)) for _ in range(3))
    mask = np.ones((b, t), dtype=bool)
    mask[1, 5:] = False  # the second sentence has 5 tokens and padding
    for name in ("positive@orf", "trig@iid"):
        est = registry.get(name, m=16)
        out = random_feature_attention(est, seed=11)(2, q, k, v, mask)
        for h in range(heads):
            flat = mask.reshape(-1)
            qh, kh = q[:, h].reshape(-1, d), k[:, h].reshape(-1, d)
            gen = np.random.default_rng([11, 2, h])
            draw = est.sample(gen, d=d, draws=1, fit=(qh[flat], kh[flat]))
            for i in range(b):
                n = int(mask[i].sum())
                K_hat = est.estimate(draw, q[i, h, :n], k[i, h, :n])[0]
                A_hat = K_hat / K_hat.sum(axis=-1, keepdims=True)
                np.testing.assert_allclose(out[i, h, :n], A_hat @ v[i, h, :n], rtol=1e-8)
    uni = uniform_attention(0, q, k, v, mask)
    np.testing.assert_allclose(uni[1, :, 0], v[1, :, :5].mean(axis=1))
    exact = exact_attention(0, q, k, v, mask)
    A, _ = am.softmax_attention(q[1, 0, :5], k[1, 0, :5])
    np.testing.assert_allclose(exact[1, 0, :5], A @ v[1, 0, :5])


def test_spectral_norm_equals_the_largest_singular_value() -> None:
    x = np.random.default_rng(5).standard_normal((3, 40, 6))
    expected = np.linalg.svd(x, compute_uv=False)[:, 0]
    np.testing.assert_allclose(am.spectral_norm(x), expected, rtol=1e-10)


def test_mean_and_se_over_draws_keep_undefined_and_divergent_apart() -> None:
    mean, se, n, note = _mean_se(np.array([1.0, 2.0, 3.0, np.inf]))
    assert (mean, n) == (2.0, 3) and se == pytest.approx(1 / np.sqrt(3)) and "1 of 4" in note
    assert np.isnan(_mean_se(np.array([np.nan, np.nan]))[0])
    assert _mean_se(np.array([np.inf, np.nan]))[0] == np.inf


@pytest.mark.parametrize(("name", "draws_per_head"), [("positive@orf", 1), ("gerf@iid", 3)])
def test_swap_attention_draws_once_per_head_unless_the_draw_fits_the_batch(
    name: str, draws_per_head: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every batch of a trial sees the draw of its (layer, head) seed: a data-free draw is made
    once and reused (the outputs of a fresh draw, bit for bit); a fitted one (GERF) per batch."""
    rng = np.random.default_rng(5)
    batches = [tuple(0.4 * rng.standard_normal((2, 2, 6, 4)) for _ in range(3)) for _ in range(3)]
    mask = np.ones((2, 6), dtype=bool)
    est = registry.get(name, m=8)
    reused = random_feature_attention(est, seed=3)
    outs = [reused(1, q, k, v, mask) for q, k, v in batches]
    for (q, k, v), out in zip(batches, outs, strict=True):
        np.testing.assert_array_equal(out, random_feature_attention(est, seed=3)(1, q, k, v, mask))
    calls = []
    sample = type(est).sample
    monkeypatch.setattr(type(est), "sample", lambda *a, **kw: calls.append(1) or sample(*a, **kw))
    attend = random_feature_attention(est, seed=3)
    for q, k, v in batches:
        attend(1, q, k, v, mask)
    assert len(calls) == 2 * draws_per_head  # 2 heads
