"""The precision experiment: dtype semantics, the dtype maps, and the physics of overflow."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from rfbench.compute.experiments import get_experiment
from rfbench.compute.experiments.precision import maps as pm
from rfbench.compute.experiments.precision.experiment import rotated_pairs
from rfbench.compute.experiments.shared import make
from rfbench.compute.features import registry

ESTIMATORS = [
    "trig@iid",
    "positive@orf",
    "hyperbolic@simrf",
    "gerf@iid",
    "sderf@orf",
    "angular-hybrid@iid",
]


def test_numpy_half_semantics_as_documented():
    """float16/bfloat16 matmul accumulates in float32; np.sum of bfloat16 in bfloat16."""
    for dt in (np.float16, ml_dtypes.bfloat16):
        ones = np.ones(4096, dt)
        assert float(ones @ ones) == 4096.0
    assert float(np.sum(np.ones(4096, ml_dtypes.bfloat16))) == 256.0
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float16(11.1))) and np.isfinite(np.exp(np.float16(11.08)))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_forms_agree_in_float64(name):
    """Naive, stabilised (ε = 0) and rfbench's log-space maps are the same estimator in float64."""
    rng = np.random.default_rng(1)
    est = make(name, 16, 4)
    x, y = rotated_pairs(rng, 1.2, np.linspace(0, np.pi, 4), 8)
    draw = est.sample(rng, d=8, draws=5, fit=(x, y))
    queries, keys = pm.pair_forms(est, draw, x, y, "float64")
    ref = est.estimate(draw, x, y)
    for form in pm.FORMS:
        k_hat = pm.kernel_estimate(queries[form], keys[form])
        np.testing.assert_allclose(k_hat, ref, rtol=1e-9, atol=1e-12, err_msg=form)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_low_precision_is_close_to_float64_at_small_norm(dtype):
    """At r = 0.5 every form is within a few units of the dtype's rounding of float64."""
    rng = np.random.default_rng(2)
    est = make("hyperbolic@iid", 64, 8)
    x, y = rotated_pairs(rng, 0.5, np.linspace(0, np.pi, 3), 16)
    draw = est.sample(rng, d=16, draws=20)
    ref = est.estimate(draw, x, y)
    queries, keys = pm.pair_forms(est, draw, x, y, dtype)
    eps = float(ml_dtypes.finfo(pm.DTYPES[dtype]).eps)
    for form in pm.FORMS:
        k_hat = pm.kernel_estimate(queries[form], keys[form])
        assert np.max(np.abs(k_hat / ref - 1)) < 20 * eps, form


@pytest.mark.slow
def test_naive_positive_overflows_in_float16_as_the_gaussian_law_says():
    """exp(ωᵀx − ‖x‖²/2) is inf in float16 iff ωᵀx > log(65520) + ‖x‖²/2 (65520 rounds to inf);
    ωᵀx ~ N(0, r²). At r = 5 that is P(Z > 4.72) ≈ 1.2e-6 per feature: count over 2·10⁷."""
    r, m, draws = 5.0, 4096, 5000
    rng = np.random.default_rng(3)
    est = registry.get("positive@iid", m=m)
    draw = est.sample(rng, d=2, draws=draws)
    x = np.array([[r, 0.0]])
    parts = pm.parts(est, draw, x, "query", "float16")
    features, _ = pm.dense(parts, "naive", "query")
    bad = int(np.count_nonzero(~np.isfinite(features)))
    n = features.size
    threshold = np.log(65520.0) + r**2 / 2
    expected = n * norm.sf(threshold / r)
    assert abs(bad - expected) < 4 * np.sqrt(expected) + 1, (bad, expected)
    # the same draws in float64 never overflow (the threshold is log(1.8e308) ≈ 709.8)
    f64, _ = pm.dense(pm.parts(est, draw, x, "query", "float64"), "naive", "query")
    assert np.all(np.isfinite(f64))


def test_naive_trig_overflows_in_float16_beyond_the_range():
    """e^{‖x‖²/2} > 65504 for r > √(2 log 65520) ≈ 4.71: every naive trig feature, hence
    estimate, is non-finite at r = 5; at r = 3 each of the 2M products is at most e^{r²}/M, so
    |K̂| ≤ 2e^9 ≈ 16206 < 65504 and no estimate is."""
    rng = np.random.default_rng(4)
    est = make("trig@iid", 32, 8)
    for r, expect_bad in ((5.0, True), (3.0, False)):
        x, y = rotated_pairs(rng, r, np.array([np.pi / 2]), 8)
        draw = est.sample(rng, d=8, draws=50)
        queries, keys = pm.pair_forms(est, draw, x, y, "float16", ("naive",))
        finite = np.isfinite(pm.kernel_estimate(queries["naive"], keys["naive"]))
        assert (not finite.any()) if expect_bad else finite.all()


@pytest.fixture(scope="module")
def quick_rows():
    exp = get_experiment("precision")
    config = exp.resolve_config(
        {"r": [0.5, 2.0, 5.0], "couplings": ["iid", "orf"], "samples": 30, "attention_draws": 3},
        profile="quick",
    )
    frames = [
        exp.run_job(spec, np.random.default_rng(i)) for i, spec in enumerate(exp.grid(config))
    ]
    return exp.finalize(pd.concat(frames, ignore_index=True), config)


@pytest.mark.slow
def test_logspace_map_is_finite_everywhere(quick_rows):
    """rfbench's map, cast to any dtype, never gives a non-finite kernel estimate; in attention
    (one shift for all keys) only float16 can underflow a whole row to 0/0, so the attention
    weights are checked in the dtypes with float32's exponent range."""
    rows = quick_rows[quick_rows["form"] == "logspace"]
    bad = rows[rows["metric"] == "nonfinite_fraction"]
    assert set(bad["dtype"]) == set(pm.DTYPES) and bad["r"].max() == 5.0
    assert (bad["value"] == 0).all(), bad[bad["value"] > 0]
    attn = rows[(rows["metric"] == "attn_nonfinite_fraction") & (rows["dtype"] != "float16")]
    assert len(attn) and (attn["value"] == 0).all(), attn[attn["value"] > 0]


@pytest.mark.slow
def test_rows_have_dtype_and_form(quick_rows):
    assert {"dtype", "form"} <= set(quick_rows.columns)
    assert set(quick_rows["form"]) == set(pm.FORMS)
    naive16 = quick_rows[
        (quick_rows["form"] == "naive")
        & (quick_rows["dtype"] == "float16")
        & (quick_rows["estimator"] == "trig@iid")
        & (quick_rows["metric"] == "nonfinite_fraction")
    ]
    assert naive16.set_index("r")["value"].groupby(level=0).min().loc[5.0] == 1.0
