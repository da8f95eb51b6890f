"""Issue 42 item 4: attention's draws per head stop when the head's test against uniform attention
is resolved (``stop = "resolved"``; docs/experiments.md#attention-stop): positive maps read the
exact empirical-Bernstein sequence on the output bound known before any draw, others the
asymptotic one; batches are keyed substreams, so the stopping point is deterministic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rfbench.compute import sequential
from rfbench.compute.experiments import get_experiment
from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.experiments.attention.heads import output_bound
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run


def _head(seed: int, t: int = 24, d: int = 8, scale: float = 0.7):
    rng = np.random.default_rng(seed)
    q, k = scale * rng.standard_normal((2, t, d))
    return q, k, rng.standard_normal((t, d))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_output_bound_holds_for_every_convex_combination_and_is_attained(seed: int) -> None:
    q, k, v = _head(seed)
    truth = am.HeadTruth.of(q, k, v)
    bound = output_bound(truth)
    rng = np.random.default_rng(seed + 10)
    # random row-stochastic weights (what a positive map's D̂⁻¹Â is), some nearly one-hot
    for power in (1.0, 8.0, 40.0):
        w = rng.random((200, len(q), len(k))) ** power
        w /= w.sum(-1, keepdims=True)
        err = am.output_errors(truth, w @ v)["out_rel_frob"]
        assert np.all(err <= bound * (1 + 1e-12))
    # attained: each row put on the value row farthest from its true output
    far = ((truth.out[:, None, :] - v[None]) ** 2).sum(-1).argmax(1)
    worst = am.output_errors(truth, v[far][None])["out_rel_frob"][0]
    assert worst == pytest.approx(bound, rel=1e-9)


def test_bounded_interval_p_value_is_the_level_where_it_first_excludes_zero() -> None:
    rng = np.random.default_rng(4)
    x = np.clip(0.3 + 0.1 * rng.standard_normal(60), 0.0, 1.0)
    reading = sequential.bounded_interval(x, -1.0, 1.0)
    assert reading.low > 0 and reading.p < sequential.ALPHA
    lo, _ = sequential.bernstein_cs(x, -1.0, 1.0, reading.p * 1.02)
    assert lo.max() > 0
    lo, hi = sequential.bernstein_cs(x, -1.0, 1.0, reading.p / 1.05)
    assert lo.max() <= 0 and hi.min() >= 0
    # a mean of zero is not rejected
    null = sequential.bounded_interval(np.array([-0.2, 0.2] * 20), -1.0, 1.0)
    assert null.low < 0 < null.high and null.p == 1.0


def _run(tmp_path: Path, tag: str, **overrides) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    shape = (4, 32, 8)
    path = tmp_path / "qkv.npz"
    if not path.exists():  # logits of spread ~25: trig's estimates are far off
        np.savez(path, q=3.0 * rng.standard_normal(shape), k=3.0 * rng.standard_normal(shape),
                 v=rng.standard_normal(shape))  # fmt: skip
    config = get_experiment("attention").resolve_config(
        {"data": str(path), "budget": [16], "draws": 12, "swap": False, **overrides}, "quick"
    )
    out = tmp_path / f"{tag}.parquet"
    run("attention", config, RunOptions(seed=5, out=out, backend="serial", quiet=True, force=True))
    rows = load_results(out)
    return rows[rows["metric"] == "out_rel_frob"].set_index(["estimator", "head"]).sort_index()


def test_resolved_stops_clear_heads_early_and_is_deterministic(tmp_path: Path) -> None:
    maps = ["trig@iid", "positive@iid", "hyperbolic@orf"]
    fixed = _run(tmp_path, "fixed", estimators=maps)
    assert "stop" not in fixed or fixed["stop"].isna().all()  # fixed rows say nothing new
    first = _run(tmp_path, "a", estimators=maps, stop="resolved", batch=3)
    again = _run(tmp_path, "b", estimators=[*reversed(maps), "window"], stop="resolved", batch=3)
    again = again.drop(index="window", level=0)
    cols = ["value", "n_trials", "stop", "diff_low", "diff_high", "p_anytime", "beats_uniform"]
    pd.testing.assert_frame_equal(first[cols], again[cols], check_exact=True)
    # trig's error is far above uniform's (unbounded map: asymptotic sequence): some head is
    # resolved before the cap, not beating uniform; every row says why it stopped and when
    trig = first.loc["trig@iid"]
    early = trig[trig["stop"] == sequential.RESOLVED]
    assert (early["n_trials"] < 12).any()
    assert not early["beats_uniform"].any() and (early["diff_high"] < 0).all()
    drawn = first.loc[maps]
    assert set(drawn["stop"]) <= {sequential.RESOLVED, sequential.CAP}
    assert drawn["n_trials"].isin([3, 6, 9, 12]).all()
    # a positive map's interval is the exact one: within [uniform − bound, uniform]
    pos = first.loc["positive@iid"]
    uniform = _run(tmp_path, "u", estimators=["window"]).loc["uniform", "value"]
    assert (pos["diff_high"].to_numpy() <= uniform.to_numpy() + 1e-12).all()
    # at the cap the verdict is the fixed-n z test, as with stop = fixed
    cap = drawn[drawn["stop"] == sequential.CAP]
    assert (cap["beats_uniform"] == (cap["z_uniform"] > 2.0)).all()
    resolved = drawn[drawn["stop"] == sequential.RESOLVED]
    assert (resolved["beats_uniform"] == (resolved["diff_low"] > 0)).all()


def test_beats_uniform_stops_only_at_the_level_that_survives_holm() -> None:
    from rfbench.compute.experiments.attention.heads import _until_resolved

    rng = np.random.default_rng(0)

    def batch(i: int, size: int) -> dict[str, np.ndarray]:
        # a head below uniform's 1.0, not by miles: z ≈ √n
        return {"out_rel_frob": 0.9 + 0.1 * rng.standard_normal(size)}

    spec = {"draws": 90, "batch": 3, "significance": 2.0}
    _, alone, one = _until_resolved(batch, spec, 1.0, None, family=1)
    _, holm, many = _until_resolved(batch, spec, 1.0, None, family=72)
    assert alone == sequential.RESOLVED and one.low > 0 and one.n < 90
    # over a family of 72 heads it needs more draws: its p-value then survives Holm's first step
    assert many.n > one.n
    assert holm == sequential.CAP or many.p / 2 <= 0.0228 / 72
    # "does not beat" needs no family correction: an error far above uniform stops at once
    worse = {"draws": 30, "batch": 3, "significance": 2.0}
    _, why, bad = _until_resolved(
        lambda i, n: {"out_rel_frob": 3.0 + 0.1 * rng.standard_normal(n)}, worse, 1.0, None, 72
    )
    assert why == sequential.RESOLVED and bad.n == 3 and bad.high < 0
