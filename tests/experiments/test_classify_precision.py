"""Kernel regression: float32 against float64, batched against the plain per-trial loop, the
float32 range guard and its float64 fallback, and the per-data-set trial counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rfbench.cli.experiments import parse_value
from rfbench.compute.datasets import available
from rfbench.compute.experiments import ConfigError
from rfbench.compute.experiments.classify import kernel_regression as kr
from rfbench.compute.experiments.classify.data import default_sigma, prepared
from rfbench.compute.experiments.classify.experiment import Classify
from rfbench.compute.features import registry
from rfbench.compute.features.base import Draw


@pytest.fixture(autouse=True)
def _data_env(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(data_dir))


def _setup(name: str, dataset: str, m_per_d: int, draws: int, sigma: float | None = None):
    if not available(dataset):
        pytest.skip(f"data set {dataset} not available locally")
    data = prepared(dataset, "simrf", 42, dataset != "wine")
    s = sigma if sigma is not None else default_sigma(dataset)
    Xtr, Xq, yq = s * data.train.X, s * data.test.X, data.test.y
    est = registry.get(name, kernel="gaussian", m=m_per_d * data.d)
    fit = (Xq, Xtr) if est.component.data_dependent else None
    draw = est.sample(np.random.default_rng(11), data.d, draws=draws, fit=fit)
    return est, draw.projections["omega"], draw.params, (Xtr, data.Y, Xq, yq)


@pytest.mark.parametrize(
    ("name", "dataset"),
    [("positive@iid", "banknote"), ("positive@simrf", "cmc"), ("positive@orf", "wifi"),
     ("trig@orf", "yeast")],
)  # fmt: skip
def test_float32_agrees_with_float64(name: str, dataset: str) -> None:
    """Same draws in both precisions: the mean accuracies differ by far less than their standard
    error (tolerance 0.5·SE; a wrong shift or dropped row term moves them by several SE), and a
    draw's accuracy changes by at most one near-tied query."""
    est, proj, params, sets = _setup(name, dataset, 2, 200)
    a64 = kr.rf_accuracies(est, proj, params, *sets, dtype=np.float64)
    a32 = kr.rf_accuracies(est, proj, params, *sets, dtype=np.float32)
    se = np.hypot(a64.std(ddof=1), a32.std(ddof=1)) / np.sqrt(len(a64))
    assert se > 0 and abs(a32.mean() - a64.mean()) < 0.5 * se
    n_q = len(sets[3])
    assert np.max(np.abs(a32 - a64)) * n_q <= 1 + 1e-9
    assert np.mean(a32 != a64) <= 0.02


def test_dropping_the_row_term_is_detected() -> None:
    """The tolerance above can fail: scoring without the training rows' α‖x‖² (a plausible
    bug) moves the mean accuracy by many standard errors of the paired difference. On wine
    (built in, so the test's power never depends on which data files are present) at σ = 0.5 the
    shift is about 0.07 with a paired standard error near 0.007."""
    est, proj, params, (Xtr, Y, Xq, yq) = _setup("positive@iid", "wine", 2, 400, sigma=0.5)
    good = kr.rf_accuracies(est, proj, params, Xtr, Y, Xq, yq)
    softmax = registry.get("positive@iid", kernel="softmax", m=est.m)  # α = 0: no row term
    bad = kr.rf_accuracies(softmax, proj, params, Xtr, Y, Xq, yq)
    diff = good - bad
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    assert se > 0 and abs(diff.mean()) > 4 * se


def loop_accuracies(est, proj, params, Xtr, Ytr, Xq, yq) -> np.ndarray:
    """The plain per-trial loop of the papers' scripts, the reference of the batched form: for
    each draw, dense float64 features and argmax(φ(X*) (Ψᵀ Y))."""
    out = np.empty(proj.draws)
    for b in range(proj.draws):
        draw = Draw({"omega": kr.slice_draws(proj, b, b + 1)}, params, proj.d)
        psi, phi = est.key_features(draw, Xtr)[0], est.query_features(draw, Xq)[0]
        scores = np.real(phi @ (psi.T @ Ytr))
        out[b] = np.mean(np.argmax(scores, axis=1) == yq)
    return out


@pytest.mark.parametrize(
    "name", ["positive@simrf", "trig@orf", "gerf@orf", "sderf@orf", "hyperbolic@iid",
             "positive@sgq"],
)  # fmt: skip
def test_batched_equals_per_trial_loop(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Merged draws, row chunks with running column shifts and quadrature weights give the
    same per-draw accuracies as the plain per-trial loop (dense float64 features), and the same
    for any batch and chunk size."""
    est, proj, params, sets = _setup(name, "wine", 2, 12, sigma=0.35)
    loop = loop_accuracies(est, proj, params, *sets)
    batched = kr.rf_accuracies(est, proj, params, *sets)
    np.testing.assert_array_equal(batched, loop)
    monkeypatch.setattr(kr, "MAX_COLUMNS", 1)  # one draw per batch
    monkeypatch.setattr(kr, "CHUNK", 1)  # 64-row chunks: several shifts to merge
    np.testing.assert_array_equal(kr.rf_accuracies(est, proj, params, *sets), loop)
    if proj.weights is None:
        assert loop.std() > 0  # the draws differ: the comparison is not vacuous
    else:  # SGQ: one deterministic rule, signed quadrature weights carried on the key side
        assert np.any(proj.weights < 0)


def test_float32_guard_and_auto_fallback() -> None:
    """At σ = 60 the exponents leave float32's accurate range: float32 refuses, auto computes
    in float64 (identical to it)."""
    est, proj, params, sets = _setup("positive@iid", "wine", 2, 6, sigma=60.0)
    with pytest.raises(kr.Float32Unsafe):
        kr.rf_accuracies(est, proj, params, *sets, dtype=np.float32)
    auto = kr.rf_accuracies(est, proj, params, *sets, dtype="auto")
    np.testing.assert_array_equal(auto, kr.rf_accuracies(est, proj, params, *sets))


@pytest.mark.parametrize(("name", "sigma"), [("trig-phase@orf", 12.915497), ("trig@orf", 100.0)])
def test_float32_bounded_features_at_large_scale(name: str, sigma: float) -> None:
    """DERF Fig. 3's largest σ: a trig map's row term ½‖σx‖² (≈ 10⁴) cancels the Gaussian
    kernel's -½‖σx‖² in float64, so float32 is allowed (it used to refuse on the row term alone)
    and gives the same accuracies as float64 up to one near-tied query per draw; beyond
    ``FLOAT32_MAX_ARG`` the cosine's argument is too coarse in float32 and it refuses."""
    est, proj, params, (Xtr, Y, Xq, yq) = _setup(name, "wine", 2, 60, sigma=sigma)
    a64 = kr.rf_accuracies(est, proj, params, Xtr, Y, Xq, yq, dtype=np.float64)
    a32 = kr.rf_accuracies(est, proj, params, Xtr, Y, Xq, yq, dtype=np.float32)
    assert np.max(np.abs(a32 - a64)) * len(yq) <= 1 + 1e-9
    assert np.mean(a32 != a64) <= 0.05 and a64.std() > 0
    with pytest.raises(kr.Float32Unsafe, match="ωᵀx"):
        kr.rf_accuracies(est, proj, params, 1e3 * Xtr, Y, 1e3 * Xq, yq, dtype=np.float32)


def test_trials_by_dataset() -> None:
    exp = Classify()
    config = exp.check_config(
        {"dataset": ["banknote", "cmc"], "m": [1], "trials": 7,
         "trials_by_dataset": {"cmc": 30}, "estimators": ["positive@iid"]}
    )  # fmt: skip
    trials = {(j["dataset"], j["estimator"]): j["trials"] for j in exp.grid(config)}
    assert trials[("banknote", "positive@iid")] == 7 and trials[("cmc", "positive@iid")] == 30
    by_set = exp.parameters()["trials_by_dataset"]
    assert parse_value(by_set, "cmc=30, wifi=8") == {"cmc": 30, "wifi": 8}
    for bad in ({"trials_by_dataset": {"cmc": 0}}, {"dtype": "float16"}):
        with pytest.raises(ConfigError):
            exp.check_config(bad)
