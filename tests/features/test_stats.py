"""Statistics that see the tails: the resolution criterion, closed-form standard errors, the
importance-sampled MSE, paired comparisons and the pointwise headline table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.experiments.pointwise.importance import importance_mse
from rfbench.compute.features import registry, theory
from rfbench.compute.features.theory import equal_norm_pair, moments, resolution
from rfbench.compute.features.weights.mc import simplex_directions
from rfbench.compute.kernels import log_kernel
from rfbench.compute.results import load_results, make_provenance, write_results
from rfbench.compute.runner import RunOptions, run
from rfbench.present.summaries.pointwise import summary as pointwise_summary


def _pair(r: float, theta: float, d: int):
    x, y = equal_norm_pair(r, np.array([theta]), d)
    return x, y


def test_criterion_sm_plus_plus_tail_and_bounded_trig():
    """SM++ at r = 3, θ = 0 with 1,000 estimates cannot see its tail (HRF Eq. 3: the MSE lives at
    ωᵀ(x+y)/‖x+y‖ ≈ 12); trig is bounded; SM++ at small r is resolved."""
    sm = registry.get("hyperbolic@iid", m=128)
    x, y = _pair(3.0, 0.0, 64)
    assert not resolution.resolved(sm, x, y, 1000, order=2)[0]
    assert not resolution.resolved(sm, x, y, 1000, order=1)[0]
    assert resolution.draws_needed(sm, x, y)[0] > 1e20
    trig = registry.get("trig@iid", m=128)
    for theta in (0.0, 1.0, np.pi):
        assert resolution.resolved(trig, *_pair(1.0, theta, 64), 1000)[0]
    assert resolution.resolved(sm, *_pair(0.5, np.pi / 2, 64), 1000)[0]
    assert resolution.resolved(registry.get("trig@halton", m=128), x, y, 10) is not None
    assert resolution.resolved(registry.get("positive@mm", m=128), x, y, 10) is None


CASES = [
    ("trig@iid", {}),
    ("positive@iid", {}),
    ("hyperbolic@iid", {}),
    ("hyperbolic@iid", {"kernel": "gaussian"}),
    ("angular-hybrid@iid", {"n": 4}),
    ("gaussian-hybrid@iid", {"n": 4}),
    ("gerf@iid", {}),
    ("sderf@iid", {}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "options"), CASES)
def test_closed_form_standard_errors_match_replications(name, options):
    """Where the sample resolves the moments, the closed-form SEs of the mean and of the sample
    MSE equal the spread of those statistics over 400 independent replications (the spread's
    relative standard error is ≈ 1/√800 = 3.5 %, so ±20 % is > 5 of its SEs and catches √2), and
    the sample standard errors of the pooled, resolved draws."""
    rng = np.random.default_rng(11)
    est = registry.get(name, m=16, **options)
    d, reps, n = 4, 400, 500
    x, y = _pair(0.6, 1.2, d)
    true = np.exp(log_kernel(est.kernel, x[:, None], y[:, None])[0, 0])
    fit = (x, y) if getattr(getattr(est, "component", None), "data_dependent", False) else None
    draw = est.sample(rng, d=d, draws=reps * n, fit=fit)
    assert resolution.resolved(est, x, y, n, params=draw.params)[0]
    k = est.estimate(draw, x, y)[:, 0, 0].reshape(reps, n)
    mse = theory.mse(est, x, y, params=draw.params)
    se_mean = moments.mean_stderr(mse, n)[0]
    se_mse = moments.mse_stderr(est, x, y, mse, n, draw.params)[0]
    assert abs(np.std(k.mean(axis=1)) / se_mean - 1) < 0.2
    assert abs(np.std(((k - true) ** 2).mean(axis=1)) / se_mse - 1) < 0.2
    # and the sample standard errors of the pooled draws (resolved) agree with them
    assert abs(np.std(k) / np.sqrt(n) / se_mean - 1) < 0.2
    assert abs(np.std((k - true) ** 2) / np.sqrt(n) / se_mse - 1) < 0.2


def test_no_closed_fourth_moment_for_couplings_and_shared_variants():
    x, y = _pair(0.6, 1.2, 8)
    for name, options in (("positive@orf", {}), ("angular-hybrid@iid", {"variant": "shared-base"})):
        assert moments.central_fourth(registry.get(name, m=8, **options), x, y) is None


@pytest.mark.parametrize("r", [1.5, 2.0])
def test_importance_sampled_mse_where_the_sample_is_unresolved(r):
    """SM++ at θ = 0: the plain sample is unresolved, the IS estimate is within 5 SE of the
    closed form (HRF Lemma 2.2) and resolved by its own effective sample size."""
    rng = np.random.default_rng(5)
    est = registry.get("hyperbolic@iid", m=128)
    x, y = _pair(r, 0.0, 64)
    assert not resolution.resolved(est, x, y, 10_000)[0]
    true = np.exp(np.sum(x * y, axis=-1))
    found = importance_mse(est, x, y, true, 4000, rng)
    value, se, ok = found["is_mse"]
    exact = theory.mse(est, x, y)
    assert ok[0] and abs(value[0] - exact[0]) < 5 * se[0] and se[0] < 0.1 * exact[0]
    rel, rel_se, _ = found["is_rel_rmse"]
    assert abs(rel[0] - np.sqrt(exact[0]) / true[0]) < 5 * rel_se[0]


def test_paired_couplings_have_their_own_laws():
    """ORF rows of a block are orthogonal, SimRF rows at cos = -1/(d-1) (SimRF Eq. 9), and both
    keep the row norms of the shared Gaussian array (χ_d, independent of the Haar frame)."""
    rng = np.random.default_rng(3)
    d = 5
    G = rng.standard_normal((7, 2 * d, d))
    norms = np.linalg.norm(G, axis=-1)
    for coupling, cosine in (("orf", 0.0), ("simrf", -1 / (d - 1))):
        W = registry.make_weights(coupling).from_gaussian(G, 2 * d)
        assert np.allclose(np.linalg.norm(W, axis=-1), norms)
        block = W[:, :d] / norms[:, :d, None]
        gram = block @ np.swapaxes(block, -1, -2)
        assert np.allclose(gram, np.where(np.eye(d, dtype=bool), 1.0, cosine))
    assert np.allclose(simplex_directions(d).sum(axis=0), 0.0)
    assert np.array_equal(registry.make_weights("iid").from_gaussian(G, 3), G[:, :3])
    assert registry.make_weights("pnc").from_gaussian(G, 3) is None  # coupled norms: not pairable
    plus = registry.make_weights("simrf-plus").from_gaussian(G, 2 * d)  # norm-dependent directions
    assert np.allclose(np.linalg.norm(plus, axis=-1), norms)
    assert registry.make_weights("simrf-plus", code_compat=True).from_gaussian(G, d) is None


def _pointwise(tmp_path: Path, name: str, **params) -> pd.DataFrame:
    path = run(
        "pointwise", params, RunOptions(seed=3, out=tmp_path / f"{name}.parquet", backend="serial")
    )
    return load_results(path)


def test_paired_differences_have_smaller_standard_errors(tmp_path):
    """iid/ORF/SimRF on one Gaussian array: the SE of each MSE difference shrinks, and every
    marginal keeps its law (means within 5 SE of K; MSEs within 5 SE of the closed forms)."""
    base = {
        "estimators": ["positive@iid", "positive@orf", "positive@simrf"],
        "m": [8],
        "d": 8,
        "r": [0.6],
        "angles": 5,
        "samples": 4000,
    }
    runs = {p: _pointwise(tmp_path, f"p{p}", **base, paired=p) for p in (False, True)}
    inner = {}
    for paired, df in runs.items():
        diff = df[(df["metric"] == "diff_mse") & df["theta"].between(0.1, 3.0)]
        assert set(diff["reference"]) == {"positive@iid"} and len(diff) == 2 * 3
        inner[paired] = diff.set_index(["estimator", "theta"])["stderr"]
        wide = df[df["metric"].isin(["mean", "true", "mse", "theory_mse"])]
        wide = wide.pivot_table(index=["estimator", "theta"], columns="metric", values="value")
        se = df[df["metric"].isin(["mean", "mse"])].pivot_table(
            index=["estimator", "theta"], columns="metric", values="stderr"
        )
        ok = se["mean"] > 1e-9 * wide["true"]  # θ = π: x + y = 0, every estimate is exact
        assert ((wide["mean"] - wide["true"]).abs()[ok] < 5 * se["mean"][ok]).all()
        assert ((wide["mse"] - wide["theory_mse"]).abs()[ok] < 5 * se["mse"][ok]).all()
    ratio = inner[True] / inner[False]
    # the SE estimates are good to a few %: the gain is clear where the MSEs are large
    assert (ratio[ratio.index.get_level_values("theta") < 2] < 0.8).all() and ratio.mean() < 0.85


def test_headline_table_ranks_by_closed_form_and_marks_sm_plus_plus(tmp_path):
    """`rfbench pointwise --r 1.5`, smaller: the angular hybrid ranks ahead of FAVOR+ (HRF Fig. 2)
    and FAVOR+'s empirical max is marked unresolved; rows carry `resolved`."""
    df = _pointwise(tmp_path, "head", r=[1.5], angles=9, samples=500)
    assert df["resolved"].dtype == "boolean" and df["resolved"].notna().all()
    table = pointwise_summary(df).set_index("estimator")
    assert table.loc["angular-hybrid@iid", "rank"] < table.loc["hyperbolic@iid", "rank"]
    assert not table.loc["hyperbolic@iid", "resolved"]
    assert table.loc["trig@iid", "resolved"]
    assert "resolved" in table.attrs["footnote"]
    sm = df[(df["estimator"] == "hyperbolic@iid") & (df["metric"] == "mse")]
    assert not sm.loc[sm["theta"] == 0, "resolved"].any()


def test_importance_option_adds_is_rows(tmp_path):
    df = _pointwise(
        tmp_path,
        "is",
        estimators=["hyperbolic@iid"],
        r=[1.5],
        angles=3,
        samples=1000,
        importance=True,
    )
    rows = df[df["metric"] == "is_mse"].set_index("theta")
    exact = df[df["metric"] == "theory_mse"].set_index("theta")["value"]
    assert rows["resolved"].all() and len(rows) == 3
    true = df[df["metric"] == "true"].set_index("theta")["value"]  # θ = π: exact, rounding only
    assert ((rows["value"] - exact).abs() <= 5 * rows["stderr"] + 1e-12 * true**2).all()


def test_resolved_column_round_trip(tmp_path):
    rows = pd.DataFrame(
        {
            "experiment": "x",
            "figure": "",
            "estimator": "e",
            "kernel": "softmax",
            "metric": "mse",
            "value": [1.0, 2.0, 3.0],
            "stderr": None,
            "n_trials": 1,
            "resolved": [True, False, None],
        }
    )
    path = write_results(rows, tmp_path / "r.parquet", make_provenance(config={}, seed=0))
    back = load_results(path)["resolved"]
    assert back.dtype == "boolean" and back.isna().tolist() == [False, False, True]
