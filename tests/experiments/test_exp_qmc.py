"""The qmc experiment (HRF Table 1): quick profile end to end, and MC MSE against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.experiments import ConfigError, JobSpec, get_experiment
from rfbench.compute.experiments.qmc.experiment import pair_points
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run
from rfbench.present.summaries.qmc import paper_column, paper_table1
from rfbench.present.summaries.qmc import summary as qmc_summary


@pytest.fixture
def data_env(data_dir, monkeypatch):
    monkeypatch.setenv("RFBENCH_DATA", str(data_dir))
    return data_dir


@pytest.mark.slow
def test_quick_profile_end_to_end(tmp_path, data_env):
    exp = get_experiment("qmc")
    config = exp.resolve_config({}, "quick", figure="hrf-table1")
    df = load_results(
        run(exp, config, RunOptions(out=tmp_path / "q.parquet", backend="serial", quiet=True))
    )
    assert set(df["figure"]) == {"hrf-table1"}
    assert set(df["dataset"]) == {"wine", "boston"}
    assert not df["value"].isna().any()
    for (dataset, est), part in df.groupby(["dataset", "estimator"]):
        metrics = set(part["metric"])
        assert {"mse", "mse_std", "bias"} <= metrics, (dataset, est)
        mse = part.loc[part["metric"] == "mse", "value"].item()
        assert 0 < mse < 1, (dataset, est, mse)  # unit-norm rows: MSEs of order 1e-3..1e-1
        hybrid = est.startswith("angular-hybrid")
        assert part["m"].iloc[0] == (64 if hybrid else 512)
        assert (part["n"].iloc[0] == 8) if hybrid else part["n"].isna().all()
    assert "trig@iid" in set(df.loc[df["metric"] == "theory_mse", "estimator"])
    summary = qmc_summary(df)
    assert len(summary) == len(config["datasets"]) * len(config["estimators"])
    assert set(summary["paper column"]) >= {"HRF-ort", "HRF-iid", "ORF-reg", "ORF-Had", "Halton-R"}


def test_pairs_fixed_distinct_and_unit_norm():
    X, Y = pair_points("wine", 1.0, "rows", 100, 0)
    X2, _ = pair_points("wine", 1.0, "rows", 100, 1)
    assert X.shape == Y.shape == (100, 13)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0) and np.allclose(np.linalg.norm(Y, axis=1), 1)
    assert not np.any(np.all(X == Y, axis=1))  # i != j (wine has no duplicate rows)
    assert not np.array_equal(X, X2)  # the seed matters


@pytest.mark.parametrize(
    ("estimator", "m", "n"),
    [("trig@iid", 512, None), ("trig@orf", 512, None), ("angular-hybrid@iid", 64, 8)],
)
def test_mse_matches_closed_form(estimator, m, n, rng):
    """Empirical pair-averaged MSE within 5 standard errors of the mean closed-form MSE, and the
    tolerance is tight enough to see a factor-2 error in the MSE."""
    exp = get_experiment("qmc")
    spec = JobSpec(
        dataset="wine",
        estimator=estimator,
        norm=0.8,
        m=m,
        n=n,
        pairs=40,
        pair_seed=3,
        reps=400,
        scaling="rows",
        kernel="softmax",
    )
    rows = {r["metric"]: r for r in exp.run_job(spec, rng)}
    mse, se, th = rows["mse"]["value"], rows["mse"]["stderr"], rows["theory_mse"]["value"]
    assert 5 * se < 0.5 * th, "tolerance too loose to catch a factor-2 error"
    assert abs(mse - th) < 5 * se, (estimator, mse, th, se)
    assert abs(rows["bias"]["value"]) < 5 * rows["bias"]["stderr"]


def test_paper_columns_and_numbers():
    assert paper_column("angular-hybrid@orf") == "HRF-ort"
    assert paper_column("angular-hybrid@iid") == "HRF-iid"
    assert paper_column("hyperbolic@sorf") == "ORF-Had"  # the SORF of Yu et al. 2016, cited
    assert paper_column("hyperbolic@orf-fast") == "ORF-Had (χ row norms)"
    assert paper_column("trig@halton") == "Halton-R"
    assert paper_column("trig@iid") is None
    assert paper_table1()["wine", "HRF-ort"] == (0.70, 0.08)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ({"datasets": ["nope"]}, "nope"),
        ({"estimators": ["trig@nope"]}, "estimators"),
        ({"norm": [-1.0]}, "norm"),
        ({"scaling": "sideways"}, "scaling"),
        ({"pairs": 1}, "pairs"),
    ],
)
def test_bad_config(override, key):
    with pytest.raises(ConfigError, match=key):
        get_experiment("qmc").resolve_config(override, "quick")


def test_pair_estimates_equal_the_gram_diagonal():
    """The row-paired feature maps give the diagonal of est.estimate for the same draws."""
    from rfbench.compute.experiments.qmc.experiment import pair_estimates
    from rfbench.compute.features import registry

    X, Y = pair_points("wine", 1.0, "rows", 30, 0)
    for name, m, n in [("angular-hybrid@orf", 16, 4), ("hyperbolic@sorf", 64, None)]:
        est = registry.get(name, kernel="softmax", m=m, n=n)
        got = pair_estimates(est, np.random.default_rng(1), X, Y, 5)
        draw = est.sample(np.random.default_rng(1), d=13, draws=5)
        want = est.estimate(draw, X, Y)[:, np.arange(30), np.arange(30)]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
