"""rfbench attention --causal end to end: causal rows for every estimator and baseline, told apart
from bidirectional rows; the swap-in score's masked attention against a direct computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tiny_bert
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments import get_experiment
from rfbench.compute.experiments.attention import swap
from rfbench.compute.features import registry
from rfbench.compute.models.bert import causal_attention
from rfbench.compute.results import load_results

RUN = ("--backend", "serial", "--quiet")
ESTIMATORS = "positive@iid,trig@iid,hyperbolic@orf"


def invoke(*args: object):
    return CliRunner().invoke(app, [*map(str, args), *RUN])


def qkv_file(path: Path, t: int = 20, s: int = 20) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    arrays = {"q": 0.5 * rng.standard_normal((2, t, 8)), "k": 0.5 * rng.standard_normal((2, s, 8)),
              "v": rng.standard_normal((2, s, 8))}  # fmt: skip
    np.savez(path, **arrays)
    return arrays


def test_causal_rows_for_every_estimator_and_baseline(tmp_path: Path) -> None:
    arrays = qkv_file(tmp_path / "qkv.npz")
    out = tmp_path / "out.parquet"
    res = invoke("attention", "--data", tmp_path / "qkv.npz", "--budget", 8, "--draws", 4,
                 "--estimators", ESTIMATORS, "--causal", "--out", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = load_results(out)
    assert rows["causal"].eq(True).all() and rows["dataset"].str.endswith("+causal").all()
    heads = rows[rows["kind"] == "heads"]
    assert set(heads["estimator"]) == set(ESTIMATORS.split(","))
    base = rows[rows["kind"] == "baselines"]
    assert set(base["estimator"]) == {"uniform", "zero", "best-rank", "exact"}
    # causal uniform attention (running mean) against the masked softmax, written out per row
    uni = base[(base["estimator"] == "uniform") & (base["metric"] == "out_rel_frob")]
    for h, value in zip(uni["head"], uni["value"], strict=True):
        q, k, v = (arrays[n][h][10:] for n in "qkv")  # measured: the second half of the tokens
        exact = np.array([np.exp(q[i] @ k[: i + 1].T) @ v[: i + 1] for i in range(10)])
        exact /= np.array([np.exp(q[i] @ k[: i + 1].T).sum() for i in range(10)])[:, None]
        mean = np.array([v[: i + 1].mean(axis=0) for i in range(10)])
        expected = np.linalg.norm(exact - mean) / np.linalg.norm(exact)
        assert value == pytest.approx(expected, rel=1e-10)
    # the masked-rank bound is below every causal estimator's error at the same width
    bound = base[(base["estimator"] == "best-rank") & (base["metric"] == "attn_rel_frob")]
    assert bound["bound"].all()
    attn = heads[heads["metric"] == "attn_rel_frob"]
    merged = attn.merge(bound, left_on=["head", "features"], right_on=["head", "rank"],
                        suffixes=("", "_bound"))  # fmt: skip
    assert len(merged) > 0 and (merged["value"] >= merged["value_bound"] - 1e-12).all()


def test_a_bidirectional_run_keeps_its_jobs(tmp_path: Path) -> None:
    qkv_file(tmp_path / "qkv.npz")
    exp = get_experiment("attention")
    data = {"data": str(tmp_path / "qkv.npz"), "swap": False, "budget": [4]}
    plain = exp.grid(exp.resolve_config(data, "quick"))
    masked = exp.grid(exp.resolve_config({**data, "causal": True}, "quick"))
    assert all("causal" not in job for job in plain)
    assert [dict(j) for j in masked] == [
        {**j, "causal": True, "dataset": j["dataset"] + "+causal"} for j in plain
    ]


def test_causal_needs_as_many_keys_as_queries(tmp_path: Path) -> None:
    qkv_file(tmp_path / "qkv.npz", t=12, s=20)
    res = invoke("attention", "--data", tmp_path / "qkv.npz", "--causal",
                 "--out", tmp_path / "o.parquet")  # fmt: skip
    one_line_error(res, "--causal needs as many keys as queries")


def encoder_batch(rng: np.random.Generator, b: int = 3, heads: int = 2, t: int = 9, d: int = 4):
    q, k, v = (0.7 * rng.standard_normal((b, heads, t, d)) for _ in range(3))
    mask = np.ones((b, t), dtype=bool)
    mask[1, 6:] = False  # padding at the end of two sentences
    mask[2, 4:] = False
    return q, k, v, mask


def masked_rows(weights_of, v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Row i of sentence s: Σ_{j ≤ i, j real} w_ij v_j / Σ w_ij, written out."""
    b, heads, t, _ = v.shape
    out = np.empty_like(v)
    for s in range(b):
        for h in range(heads):
            for i in range(t):
                keys = [j for j in range(i + 1) if mask[s, j]]
                w = weights_of(s, h, i, keys)
                out[s, h, i] = w @ v[s, h, keys] / w.sum()
    return out


def test_encoder_attentions_under_the_causal_mask(rng) -> None:
    q, k, v, mask = encoder_batch(rng)
    exact = masked_rows(lambda s, h, i, keys: np.exp(q[s, h, i] @ k[s, h, keys].T), v, mask)
    np.testing.assert_allclose(causal_attention(0, q, k, v, mask), exact, rtol=1e-10)
    uniform = masked_rows(lambda s, h, i, keys: np.ones(len(keys)), v, mask)
    np.testing.assert_allclose(swap.uniform_attention(0, q, k, v, mask, causal=True), uniform)


def test_swapped_in_features_as_prefix_sums_equal_the_masked_product(rng) -> None:
    q, k, v, mask = encoder_batch(rng)
    est = registry.get("positive@iid", kernel="softmax", m=16)
    got = swap.random_feature_attention(est, seed=5, causal=True)(1, q, k, v, mask)
    d = q.shape[-1]

    def weights_of(s: int, h: int, i: int, keys: list[int]) -> np.ndarray:
        # the draw of (layer 1, head h): the generator random_feature_attention seeds
        flat = mask.reshape(-1)
        qh, kh = q[:, h].reshape(-1, d), k[:, h].reshape(-1, d)
        draw = est.sample(np.random.default_rng([5, 1, h]), d=d, draws=1, fit=(qh[flat], kh[flat]))
        phi = est.query_log_features(draw, q[s, h, i : i + 1])
        psi = est.key_log_features(draw, k[s, h, keys])
        return (phi.values[0] @ (psi.values[0] * np.exp(psi.log_scale[0])[:, None]).T)[0]

    np.testing.assert_allclose(got, masked_rows(weights_of, v, mask), rtol=1e-9)


@pytest.mark.slow  # whole-text fitting or a full model pass: not the inner loop
def test_a_causal_swap_in_on_a_tiny_model(tmp_path: Path) -> None:
    model = tiny_bert.make_model(tmp_path / "m")
    out = tmp_path / "out.parquet"
    res = invoke("attention", "--model", model, "--causal", "--tokens", 16, "--budget", 4,
                 "--draws", 2, "--estimators", "positive@iid", "--swap-budget", 8,
                 "--swap-sentences", 5, "--swap-trials", 2, "--swap-tokens", 16,
                 "--out", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = load_results(out)
    sw = rows[rows["kind"] == "swap"]
    assert set(sw["estimator"]) == {"uniform", "positive@iid"} and sw["causal"].all()
    assert rows["causal"].eq(True).all() and set(rows["layer"].dropna()) == {0, 1}
