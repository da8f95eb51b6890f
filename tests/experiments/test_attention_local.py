"""Local attention baselines, equal feature budgets, the rank bound on the measured rows, and the
statistics over heads (issues 28 items 2, 4, 5; 30 item 6), each against a direct computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error
from scipy import stats
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments.attention import budget
from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.experiments.attention.local import (
    LocalMethod,
    hybrid_estimate,
    masked_softmax_estimate,
    top_k_mask,
    window_mask,
)
from rfbench.compute.features import registry
from rfbench.compute.results import load_results
from rfbench.present.attention_stats import (
    beats_uniform_corrected,
    gap_recovered,
    median_ci,
)
from rfbench.present.statistics import holm


def head(seed: int = 0, t: int = 24, d: int = 6, scale: float = 0.6):
    """A head with some locality: keys near a query are similar to it (a random walk)."""
    rng = np.random.default_rng(seed)
    walk = np.cumsum(rng.standard_normal((t, d)), axis=0) / np.sqrt(t / 4)
    q = scale * (walk + 0.3 * rng.standard_normal((t, d)))
    k = scale * (walk + 0.3 * rng.standard_normal((t, d)))
    return q, k, rng.standard_normal((t, 5))


def direct_masked(q, k, v, keys_of_row):
    """Exact softmax over the given keys per row, a loop over rows."""
    t, s = len(q), len(k)
    a = np.zeros((t, s))
    for i in range(t):
        j = np.array(sorted(keys_of_row(i)))
        w = np.exp(q[i] @ k[j].T - np.max(q[i] @ k[j].T))
        a[i, j] = w / w.sum()
    return a, a @ v


@pytest.mark.parametrize(("t", "w"), [(24, 6), (24, 7), (24, 24), (10, 1)])
def test_window_is_the_w_nearest_keys_centred_and_shifted_at_the_ends(t: int, w: int) -> None:
    mask = window_mask(t, t, w)
    assert (mask.sum(axis=1) == w).all()
    for i in range(t):
        j = np.flatnonzero(mask[i])
        assert (np.diff(j) == 1).all() and i in j  # contiguous, holds the query's own position
        if w // 2 <= i < t - (w - w // 2):  # interior: |i − j| ≤ w/2
            assert j[0] == i - w // 2 and np.abs(j - i).max() <= w / 2


def test_window_and_top_k_equal_a_direct_row_by_row_softmax() -> None:
    q, k, v = head()
    t, w, kk = len(q), 6, 5
    rows = am.matrix_rows(t, 10)

    def start(i: int) -> int:
        return min(max(i - w // 2, 0), t - w)

    for mask, keys in (
        (window_mask(t, t, w), lambda i: range(start(i), start(i) + w)),
        (top_k_mask(q @ k.T, kk), lambda i: np.argsort(-(q[i] @ k.T))[:kk]),
    ):  # fmt: skip
        est = masked_softmax_estimate(q, k, v, mask, rows)
        a, out = direct_masked(q, k, v, keys)
        np.testing.assert_allclose(est.out[0], out, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(est.matrix[0], a[rows], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["positive@iid", "hyperbolic@orf", "trig@iid"])
def test_window_plus_map_equals_a_dense_computation_with_one_normaliser(name: str) -> None:
    """Exact exp(qᵀk) inside the window, φ(q)ᵀψ(k) outside, divided by the row's total."""
    q, k, v = head(1)
    t, w = len(q), 6
    est = registry.get(name, kernel="softmax", m=8)
    draw = est.sample(np.random.default_rng(3), d=q.shape[1], draws=3, fit=(q, k))
    mask = window_mask(t, t, w)
    rows = am.matrix_rows(t, 12)
    got = hybrid_estimate(est, draw, q, k, v, mask, rows)
    phi = est.query_log_features(draw, q).dense()
    psi = est.key_log_features(draw, k).dense()
    kernel = np.real(phi @ np.conj(np.swapaxes(psi, -1, -2)))  # complex maps: Re φψ*
    if not np.iscomplexobj(phi):
        kernel = phi @ np.swapaxes(psi, -1, -2)
    raw = np.where(mask, np.exp(q @ k.T), kernel)
    den = raw.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(got.out, (raw @ v) / den, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.matrix, (raw / den)[:, rows], rtol=1e-9, atol=1e-12)
    assert np.all(np.sign(got.normaliser) == np.sign(den[..., 0]))


def test_window_plus_map_is_exact_when_the_window_covers_the_sequence_and_stable() -> None:
    q, k, v = head(2)
    est = registry.get("positive@iid", kernel="softmax", m=4)
    draw = est.sample(np.random.default_rng(0), d=q.shape[1], draws=2)
    truth = am.HeadTruth.of(q, k, v)
    full = hybrid_estimate(est, draw, q, k, v, window_mask(24, 24, 24), np.arange(24))
    np.testing.assert_allclose(full.out[0], truth.out, rtol=1e-12)
    # logits near 800 (exp overflows in float64): still finite, the same attention as exact
    big = hybrid_estimate(est, draw, 12 * q, 12 * k, v, window_mask(24, 24, 24), np.arange(24))
    big_truth = am.HeadTruth.of(12 * q, 12 * k, v)
    assert np.max(12 * q @ (12 * k).T) > 710
    np.testing.assert_allclose(big.out[0], big_truth.out, rtol=1e-10)


def test_local_methods_parse_and_match_the_budget() -> None:
    assert LocalMethod.parse("positive@iid") is None
    assert LocalMethod.parse("window+hedgehog").feature_map == "hedgehog"
    window, top, hybrid = (LocalMethod.parse(n) for n in ("window", "top-k", "window+trig@orf"))
    assert (window.keys(64), top.keys(64), hybrid.keys(64)) == (64, 64, 32)
    assert top.oracle and not window.oracle and window.keys(64, window=10) == 10


@pytest.mark.parametrize(
    ("name", "features", "m"),
    [("positive@iid", 64, 64), ("hyperbolic@iid", 64, 32), ("trig@orf", 64, 32),
     ("gerf@iid", 16, 16), ("nystrom", 16, 16)],
)  # fmt: skip
def test_equal_features_derive_projections_from_the_estimator(name, features, m) -> None:
    est = registry.get(name, kernel="softmax", m=1)
    assert budget.projections(est, features) == m
    width = registry.get(name, kernel="softmax", m=m)
    draw = width.sample(np.random.default_rng(0), d=6, draws=1, fit=head()[:2])
    values = width.query_log_features(draw, head()[0]).values
    real = values.shape[-1] * (2 if np.iscomplexobj(values) else 1)
    assert real == features


def test_rank_bound_is_the_best_rank_r_error_of_the_measured_rows() -> None:
    q, k, v = head(4, t=40)
    truth = am.HeadTruth.of(q, k, v)
    rows = am.matrix_rows(40, 10)
    bound = am.rank_bound(truth.A, rows, [1, 3, 10, 20])
    sub = truth.A[rows]
    u, s, vt = np.linalg.svd(sub, full_matrices=False)
    for r in (1, 3):
        best = (u[:, :r] * s[:r]) @ vt[:r]
        assert bound[r] == pytest.approx(np.linalg.norm(best - sub) / np.linalg.norm(sub))
    assert bound[10] == pytest.approx(0.0, abs=1e-7) and bound[20] == 0.0  # r ≥ |R|: floor 0
    # uniform attention's matrix metrics on the same rows, directly
    got = am.uniform_matrix_metrics(truth, rows)
    assert got["attn_rel_frob"] == pytest.approx(
        np.linalg.norm(sub - 1 / 40) / np.linalg.norm(sub), rel=1e-12
    )
    kl = np.mean([np.sum(a * np.log(a * 40)) for a in sub])
    assert got["attn_kl"] == pytest.approx(kl, rel=1e-10)


@pytest.mark.parametrize(
    "name",
    ["positive@iid", "positive@orf", "hyperbolic@iid", "trig@iid", "gerf@orf", "nystrom",
     "positive@pnc"],
)  # fmt: skip
def test_no_feature_map_falls_below_the_rank_bound_at_its_width(name: str) -> None:
    """Every draw, every budget: attn_rel_frob on the measured rows ≥ the bound at rank = the
    map's real width. With 12 measured rows and widths 4 and 8 the bound is far from 0."""
    q, k, v = head(5, t=48, scale=1.2)
    truth = am.HeadTruth.of(q, k, v)
    rows = am.matrix_rows(48, 12)
    for features in (4, 8):
        est = registry.get(name, kernel="softmax", m=1)
        est = registry.get(name, kernel="softmax", m=budget.projections(est, features))
        draw = est.sample(np.random.default_rng(features), d=6, draws=20, fit=(q, k))
        metrics = am.draw_metrics(truth, am.estimate_head(est, draw, q, k, v, rows))
        values = est.query_log_features(draw, q[:1]).values
        width = values.shape[-1] * (2 if np.iscomplexobj(values) else 1)
        floor = am.rank_bound(truth.A, rows, [width])[width]
        assert floor > 0.01
        assert (metrics["attn_rel_frob"] >= floor - 1e-12).all()


def test_holm_over_heads_matches_the_step_down_rule_and_is_stricter() -> None:
    z = np.array([4.0, 3.0, 2.6, 2.3, 2.1, 1.0, -1.0, np.inf, -np.inf])
    rows = pd.DataFrame({"estimator": "a", "budget": 16, "tokens": 512, "z_uniform": z,
                         "n_trials": 10, "value": 0.8, "stderr": 0.01})  # fmt: skip
    got = beats_uniform_corrected(rows, significance=2.0).to_numpy()
    alpha, p = stats.norm.sf(2.0), stats.t.sf(z, 9)  # z of a mean of 10 draws: Student t(9)
    # direct: sorted p, reject while p_(k) < α/(n − k)
    order = np.argsort(p)
    expected = np.zeros(z.size, bool)
    for rank, i in enumerate(order):
        if p[i] >= alpha / (z.size - rank):
            break
        expected[i] = True
    assert (got == expected).all() and (got == holm(p, alpha)).all()
    assert got.sum() < (z > 2).sum()  # the correction removes some raw rejections
    two = pd.concat([rows, rows.assign(estimator="b", z_uniform=np.full(z.size, 2.5))])
    assert beats_uniform_corrected(two).iloc[z.size :].sum() == 0  # one family per estimator


def test_median_interval_covers_the_true_median_at_its_level() -> None:
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(400):
        median, low, high = median_ci(rng.standard_normal(72))
        assert low <= median <= high
        hits += low <= 0.0 <= high
    assert hits / 400 >= 0.92  # ≥ 95 % nominal (conservative, discrete); 0.92 allows MC noise
    assert np.isnan(median_ci(np.ones(3))[1])


def test_gap_recovered_is_0_for_uniform_and_1_for_exact() -> None:
    assert gap_recovered(0.5, 0.5)[0] == 0.0 and gap_recovered(1.0, 0.5)[0] == 1.0
    assert gap_recovered(0.75, 0.5, stderr=0.01) == (0.5, pytest.approx(0.02))


def invoke(*args: object):
    return CliRunner().invoke(app, [*map(str, args), "--backend", "serial", "--quiet"])


def qkv(tmp_path: Path) -> Path:
    q, k, v = head(6, t=20)
    np.savez(tmp_path / "qkv.npz", q=q[None], k=k[None], v=v[None])
    return tmp_path / "qkv.npz"


def test_a_window_larger_than_the_sequence_exits_2_with_one_line(tmp_path: Path) -> None:
    res = invoke("attention", "--data", qkv(tmp_path), "--window", 21, "--estimators", "window",
                 "--budget", 8, "--out", tmp_path / "o.parquet")  # fmt: skip
    assert res.exit_code == 2 and "window" in one_line_error(res)


def test_a_budget_the_map_cannot_have_exits_2_with_one_line(tmp_path: Path) -> None:
    res = invoke("attention", "--data", qkv(tmp_path), "--estimators", "hyperbolic@iid",
                 "--budget", 1, "--out", tmp_path / "o.parquet")  # fmt: skip
    assert res.exit_code == 2 and "budget" in one_line_error(res)


def test_rows_print_budget_projections_width_and_the_local_keys(tmp_path: Path) -> None:
    out = tmp_path / "o.parquet"
    res = invoke("attention", "--data", qkv(tmp_path), "--budget", "4,8", "--draws", 3,
                 "--estimators", "positive@iid,hyperbolic@iid,window,top-k,window+trig@iid",
                 "--matrix-rows", 6, "--out", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = load_results(out)
    heads = rows[(rows["kind"] == "heads") & (rows["metric"] == "out_rel_frob")]
    got = heads.set_index(["estimator", "budget"])[["m", "features", "window", "top_k"]]
    assert got.loc[("hyperbolic@iid", 8)].tolist()[:2] == [4, 8]
    assert got.loc[("positive@iid", 4)].tolist()[:2] == [4, 4]
    assert got.loc[("window+trig@iid", 8)].tolist()[:3] == [2, 8, 4]
    assert got.loc[("window", 8), "window"] == 8 and got.loc[("top-k", 4), "top_k"] == 4
    assert (heads["features"] == heads["budget"]).all()
    # the uniform baseline's matrix metrics are on the same 6 rows as the estimators'
    base = rows[(rows["estimator"] == "uniform") & (rows["metric"] == "attn_rel_frob")]
    q, k, v = (x[10:] for x in head(6, t=20))  # measured: the second half of the tokens
    sub = am.HeadTruth.of(q, k, v).A[am.matrix_rows(10, 6)]
    expected = np.linalg.norm(sub - 1 / 10) / np.linalg.norm(sub)
    assert base["value"].iloc[0] == pytest.approx(expected, rel=1e-12)


def test_only_in_layer_swaps_one_layer_and_keeps_exact_attention_elsewhere() -> None:
    from rfbench.compute.experiments.attention.swap import only_in_layer, uniform_attention
    from rfbench.compute.models.bert import exact_attention

    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    mask = np.ones((2, 5), bool)
    attend = only_in_layer(uniform_attention, 1)
    np.testing.assert_array_equal(attend(1, q, k, v, mask), uniform_attention(1, q, k, v, mask))
    for other in (0, 2):
        np.testing.assert_array_equal(
            attend(other, q, k, v, mask), exact_attention(other, q, k, v, mask)
        )


@pytest.mark.slow  # whole-text fitting or a full model pass: not the inner loop
def test_per_layer_swap_rows_and_their_gap_on_a_tiny_model(tmp_path: Path) -> None:
    """--swap-per-layer: uniform and the map swapped in each layer alone; the report's per-layer
    table is the gap (score − uniform's)/(1 − uniform's) of those rows."""
    import tiny_bert

    from rfbench.present.attention_stats import swap_gaps
    from rfbench.present.report.beyond_attention import attention_part

    model = tiny_bert.make_model(tmp_path / "m")
    out = tmp_path / "o.parquet"
    res = CliRunner(env={"RFBENCH_CACHE": str(tmp_path / "data")}).invoke(app, [
        "attention", "--model", str(model), "--tokens", "16", "--budget", "4", "--draws", "2",
        "--estimators", "positive@iid", "--swap-budget", "4", "--swap-sentences", "6",
        "--swap-trials", "2", "--swap-tokens", "8", "--swap-per-layer", "positive@iid",
        "--out", str(out), "--backend", "serial", "--quiet", "--no-plot",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = load_results(out)
    swap = rows[(rows["kind"] == "swap") & (rows["metric"] == "swap_cosine")]
    per_layer = swap[swap["layer"].notna()]
    assert set(zip(per_layer["estimator"], per_layer["layer"], strict=True)) == {
        (e, layer) for e in ("uniform", "positive@iid") for layer in (0, 1)
    }
    gaps = swap_gaps(swap)
    gaps = gaps[(gaps["metric"] == "swap_cosine gap recovered") & gaps["layer"].notna()]
    for _, row in gaps.iterrows():
        at = per_layer[per_layer["layer"] == row["layer"]].set_index("estimator")["value"]
        u = at["uniform"]
        assert row["value"] == pytest.approx((at["positive@iid"] - u) / (1 - u))
    text = "\n".join(attention_part(rows))
    assert "for `positive@iid`: layer 0 " in text and ", layer 1 " in text  # one method: a sentence


def test_a_local_method_cannot_be_swapped_per_layer(tmp_path: Path) -> None:
    res = invoke("attention", "--data", qkv(tmp_path), "--swap-per-layer", "window",
                 "--out", tmp_path / "o.parquet")  # fmt: skip
    assert res.exit_code == 2 and "swap_per_layer" in one_line_error(res)


def test_causal_local_methods_see_only_the_past() -> None:
    """--causal: the window is the w most recent keys; top-k chooses among the keys a row sees;
    window+map covers the visible keys outside the window (a dense computation, row by row)."""
    q, k, v = head(7)
    t, w = len(q), 5
    visible = np.tril(np.ones((t, t), bool))
    mask = window_mask(t, t, w, causal=True)
    for i in range(t):
        assert set(np.flatnonzero(mask[i])) == set(range(max(0, i - w + 1), i + 1))
    top = top_k_mask(q @ k.T, 4, visible)
    for i in range(t):
        seen = np.arange(i + 1)
        best = seen[np.argsort(-(q[i] @ k[seen].T))[:4]]
        assert set(np.flatnonzero(top[i])) == set(best)
    est = registry.get("positive@iid", kernel="softmax", m=6)
    draw = est.sample(np.random.default_rng(1), d=q.shape[1], draws=2)
    got = hybrid_estimate(est, draw, q, k, v, mask, np.arange(t), visible)
    kernel = est.query_log_features(draw, q).dense() @ np.swapaxes(
        est.key_log_features(draw, k).dense(), -1, -2
    )
    raw = np.where(mask, np.exp(q @ k.T), np.where(visible, kernel, 0.0))
    np.testing.assert_allclose(got.out, (raw @ v) / raw.sum(-1, keepdims=True), rtol=1e-9)
    assert np.all(got.matrix[:, ~visible] == 0)


def test_causal_rank_bound_on_measured_rows_is_below_every_causal_map() -> None:
    from rfbench.compute.experiments.attention import causal

    q, k, v = head(8, t=48, scale=1.2)
    truth = causal.head_truth(q, k, v)
    rows = am.matrix_rows(48, 40)  # the causal block bound needs many rows per block
    full = causal.masked_rank_bound(truth.A, [2], np.arange(48))[2]
    assert full == pytest.approx(causal.masked_rank_bound(truth.A, [2])[2], rel=1e-12)
    for name in ("positive@iid", "hyperbolic@orf"):
        est = registry.get(name, kernel="softmax", m=1)
        est = registry.get(name, kernel="softmax", m=budget.projections(est, 2))
        draw = est.sample(np.random.default_rng(2), d=6, draws=10)
        metrics = causal.draw_metrics(truth, causal.estimate_head(est, draw, q, k, v, rows))
        floor = causal.masked_rank_bound(truth.A, [2], rows)[2] / np.linalg.norm(truth.A[rows])
        assert floor > 0.01 and (metrics["attn_rel_frob"] >= floor - 1e-12).all()
