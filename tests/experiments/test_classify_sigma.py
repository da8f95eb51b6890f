"""classify's σ: data sets without a published σ take SVC's gamma='scale' rule, every row says
where its σ came from (``sigma_rule``), and a σ that makes the kernel nearly the identity warns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments.classify import bandwidth
from rfbench.compute.experiments.classify.data import SIMRF_SIGMA, prepared
from rfbench.compute.experiments.classify.experiment import Classify
from rfbench.compute.kernels import log_kernel
from rfbench.compute.results import DERIVED_COLUMNS, PARAMETER_COLUMNS, STRING, load_results
from rfbench.compute.runner import RunOptions, run
from rfbench.present.summaries.classify import summary as classify_summary

FAST = {"estimators": ["positive@iid"], "m": [1], "trials": 2}


@pytest.fixture(autouse=True)
def _data_env(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(data_dir))


def _run(config: dict, out: Path):
    exp = Classify()
    resolved = exp.resolve_config({**FAST, **config}, None)
    return load_results(run(exp, resolved, RunOptions(out=out, backend="serial", quiet=True)))


def test_gamma_scale_is_svcs_gamma() -> None:
    """σ = √(2γ) with scikit-learn's own γ of SVC(gamma='scale') (Gaussian exp(−‖σx − σy‖²/2) =
    exp(−γ‖x − y‖²)); softmax exp(σ²xᵀy) = exp(γxᵀy): σ = √γ."""
    X = prepared("digits", "simrf", 42, True).train.X
    y = np.arange(len(X)) % 3
    gamma = SVC(gamma="scale").fit(X[:60], y[:60])._gamma
    assert np.isclose(bandwidth.gamma_scale_sigma(X[:60], "gaussian") ** 2 / 2, gamma, rtol=1e-12)
    assert np.isclose(bandwidth.gamma_scale_sigma(X[:60], "softmax") ** 2, gamma, rtol=1e-12)


def test_a_builtin_set_without_published_sigma_runs_by_default(tmp_path: Path) -> None:
    """``rfbench classify --dataset digits`` used to refuse its own default σ; it runs with the
    gamma-scale σ, recorded per row, without a warning."""
    out = tmp_path / "d.parquet"
    res = CliRunner().invoke(app, ["classify", "--dataset", "digits", "--estimator",
                                   "positive@iid", "--m", "1", "--trials", "2", "--out",
                                   str(out), "--backend", "serial", "--quiet"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "warning" not in res.output
    rows = load_results(out)
    X = prepared("digits", "simrf", 42, True).train.X
    assert np.allclose(rows["sigma"], np.sqrt(2.0 / (X.shape[1] * X.var())), rtol=1e-12)
    assert set(rows["sigma_rule"]) == {bandwidth.GAMMA_SCALE}
    assert classify_summary(rows)["σ"].tolist() == [f"{rows['sigma'].iloc[0]:.3g} gamma-scale"]


def test_sigma_rule_says_where_each_sigma_came_from(tmp_path: Path) -> None:
    rows = _run({"dataset": ["banknote", "wine"]}, tmp_path / "a.parquet")
    rule = rows.groupby("dataset")["sigma_rule"].unique().map(list).to_dict()
    assert rule == {"banknote": [bandwidth.PUBLISHED], "wine": [bandwidth.SEARCHED]}
    assert np.allclose(rows.query("dataset == 'banknote'")["sigma"], SIMRF_SIGMA["banknote"])
    published = rows.groupby("dataset")["sigma_published"].unique().map(list).to_dict()
    assert published["banknote"] == [SIMRF_SIGMA["banknote"]] and pd.isna(published["wine"][0])
    given = _run({"dataset": ["wine"], "sigma": [0.5]}, tmp_path / "b.parquet")
    assert set(given["sigma_rule"]) == {bandwidth.GIVEN}
    tuned = _run({"dataset": ["wine"], "protocol": "derf", "tune": True, "sigma": [0.3, 0.5],
                  "val_trials": 2}, tmp_path / "c.parquet")  # fmt: skip
    by_metric = tuned.groupby("metric")["sigma_rule"].unique().map(list).to_dict()
    assert by_metric == {"accuracy": [bandwidth.TUNED], "val_accuracy": [bandwidth.GIVEN]}


def test_sigma_rule_is_a_declared_column_that_does_not_identify_rows() -> None:
    assert PARAMETER_COLUMNS["sigma_rule"] == STRING and "sigma_rule" in DERIVED_COLUMNS


def test_share_above_one_half_makes_the_exact_classifier_one_nearest_neighbour() -> None:
    """The criterion's premise: a query whose nearest training point carries more than half its
    kernel mass gets that point's label from the exact classifier (its class outscores the rest
    together). Checked on digits at σ = 1, where most queries are such."""
    data = prepared("digits", "simrf", 42, True)
    lk = log_kernel("gaussian", data.test.X, data.train.X)  # σ = 1
    w = np.exp(lk - lk.max(axis=1, keepdims=True))
    share = 1.0 / w.sum(axis=1)
    assert np.median(share) > bandwidth.NN_SHARE_MAX
    exact = np.argmax(w @ data.Y, axis=1)
    nearest = data.train.y[np.argmax(lk, axis=1)]
    sure = share > 0.5
    assert sure.sum() > len(share) / 2 and (exact[sure] == nearest[sure]).all()


def test_a_sigma_that_makes_the_kernel_nearly_the_identity_warns_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """digits at σ = 1: positive features score about 0.2 against the exact 0.92; one warning
    line names the σ, the data set and the default σ. The default σ does not warn."""
    rows = _run({"dataset": ["digits"], "sigma": [1.0]}, tmp_path / "w.parquet")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "rfbench: warning: the gaussian kernel is nearly the identity at σ = 1 on digits ("
    ), err
    assert "the default (--sigma 0) is σ = 0.181 on digits (gamma-scale)" in err[0]
    assert set(rows["sigma_rule"]) == {bandwidth.GIVEN}
    _run({"dataset": ["digits"]}, tmp_path / "ok.parquet")
    assert "warning" not in capsys.readouterr().err


def test_no_published_sigma_is_flagged() -> None:
    for name, sigma in SIMRF_SIGMA.items():
        data = prepared(name, "simrf", 42, True)
        assert bandwidth.degenerate("gaussian", data.test.X, data.train.X, sigma) is None, name
