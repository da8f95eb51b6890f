"""The released-code replay (rfbench.compute.experiments.classify.simrf_replay) against an
independent re-statement of the SimRF authors' released kernel-regression trial
(github.com/isaac-reid/ simplex_random_features): numpy's global legacy state, scipy's
``ortho_group`` drawing from it, one method after the other, features per block; plus the simplex,
SimRF+ and HD-product properties and the classify hook end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import hadamard
from scipy.stats import ortho_group

from rfbench.compute.datasets import available
from rfbench.compute.experiments import ConfigError
from rfbench.compute.experiments.classify.data import default_sigma, prepared
from rfbench.compute.experiments.classify.experiment import Classify
from rfbench.compute.experiments.classify.simrf_replay import (
    METHODS,
    hd_rotation,
    plus_directions,
    released_simplex,
    replay,
    trial_projections,
)
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run
from rfbench.compute.runner.config import read_config_file

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "simrf" / "table2-released.toml"


# ------------------------------------------------------------------ the independent re-statement


def _simplex(d: int) -> np.ndarray:
    """Rows e_i/√2 − c·1 (i < d−1) and 1/√(2d)·1, last coordinate zeroed, scaled by ‖row 1‖."""
    c = 1.0 / ((d - 1) * np.sqrt(2.0)) * (1.0 + 1.0 / np.sqrt(d))
    rows = []
    for i in range(d):
        row = np.full(d, 1.0 / np.sqrt(2.0 * d)) if i == d - 1 else -c * np.ones(d)
        if i < d - 1:
            row[i] += 1.0 / np.sqrt(2.0)
        row[d - 1] = 0.0
        rows.append(row)
    S = np.array(rows)
    return S / np.sqrt(np.sum(S[1] ** 2))


def _rotation(rs: np.random.RandomState, d: int, fast: bool) -> np.ndarray:
    """scipy's Haar draw from the state, or H D3 H D2 H D1 with signs drawn D1 first."""
    if not fast:
        return ortho_group.rvs(d, random_state=rs)
    D = [np.diag(np.sign(rs.random(d) - 0.5)) for _ in range(3)]
    H = hadamard(d)
    R = H @ D[2] @ H @ D[1] @ H @ D[0]
    return R / np.sqrt(np.sum(R[0] ** 2))


def _block_features(W: np.ndarray, X: np.ndarray, m: int) -> np.ndarray:
    return np.array([np.exp(W @ x) * np.exp(-x @ x) / np.sqrt(m) for x in X])


def _trial_matrices(rs, d: int, N: int, fast: bool) -> list[list[np.ndarray]]:
    """One trial's d × d blocks of IID, ORF, SimRF, SimRF+ projections in the released order."""
    S = _simplex(d)
    mats: list[list[np.ndarray]] = [[], [], [], []]
    for _ in range(N):
        mats[0].append(rs.normal(0, 1, (d, d)))
    for _ in range(N):
        rho = np.diag(np.sqrt(rs.chisquare(d, size=d)))
        mats[1].append(rho @ _rotation(rs, d, fast))
    for _ in range(N):
        rho = np.diag(np.sqrt(rs.chisquare(d, size=d)))
        mats[2].append(rho @ S @ _rotation(rs, d, fast))
    rho = np.diag(np.sqrt(rs.chisquare(d, size=d)))
    P = S.copy()
    for _ in range(5):
        for i in range(d):
            others = np.eye(d)
            others[i, i] = 0.0
            r = np.sum(rho @ others @ P, axis=0)
            P[i] = -r / np.linalg.norm(r)
    for _ in range(N):
        mats[3].append(rho @ P @ _rotation(rs, d, fast))
    return mats


def _trial(rs, Xtr, Ytr, Xte, yte, N: int, fast: bool) -> list[float]:
    """One trial of the released protocol: accuracies of IID, ORF, SimRF, SimRF+ in draw order."""
    mats = _trial_matrices(rs, Xtr.shape[1], N, fast)
    d = Xtr.shape[1]
    out = []
    for blocks in mats:
        ftr = np.hstack([_block_features(W, Xtr, N * d) for W in blocks])
        fte = np.hstack([_block_features(W, Xte, N * d) for W in blocks])
        weights = ftr @ fte.T
        out.append(float(np.mean(np.argmax(weights.T @ Ytr, axis=1) == yte)))
    return out


def _released(Xtr, Ytr, Xte, yte, N: int, trials: int, seed: int, fast: bool) -> np.ndarray:
    """(trials, 4) accuracies as the released script gives them after np.random.seed(seed): its
    global legacy state is the RandomState(seed) stream (test_global_state_is_randomstate)."""
    rs = np.random.RandomState(seed)
    return np.array([_trial(rs, Xtr, Ytr, Xte, yte, N, fast) for _ in range(trials)])


def _toy(d: int, seed: int = 5) -> tuple[np.ndarray, ...]:
    """A small three-class problem whose accuracies vary from draw to draw."""
    gen = np.random.default_rng(seed)
    centres = gen.normal(size=(3, d))
    y = gen.integers(0, 3, size=120)
    X = 0.6 * (centres[y] + 1.5 * gen.normal(size=(120, d)))
    return X[:90], np.eye(3)[y[:90]], X[90:], y[90:]


# ------------------------------------------------------------------ tests


@pytest.mark.parametrize(("d", "blocks", "fast"), [(5, 1, False), (3, 2, False), (4, 2, True)])
def test_replay_equals_the_released_trials(d: int, blocks: int, fast: bool) -> None:
    Xtr, Ytr, Xte, yte = _toy(d)
    want = _released(Xtr, Ytr, Xte, yte, blocks, 12, seed=123, fast=fast)
    got = replay(Xtr, Ytr, Xte, yte, blocks, 12, seed=123, fast=fast)
    got_matrix = np.column_stack([got[name] for name in METHODS])
    assert np.array_equal(got_matrix, want)
    assert np.ptp(want, axis=0).min() > 0  # the draws matter: a wrong stream would show


@pytest.mark.parametrize("fast", [False, True])
def test_replay_projections_equal_the_released_draws(fast: bool) -> None:
    d, blocks, seed = 8, 3, 9
    rs = np.random.RandomState(seed)
    got = [trial_projections(rs, released_simplex(d), blocks, fast) for _ in range(4)]
    rs = np.random.RandomState(seed)
    want = [_trial_matrices(rs, d, blocks, fast) for _ in range(4)]
    for g, w in zip(got, want, strict=True):
        for method, blocks_w in zip(g, w, strict=True):
            assert np.allclose(method, np.concatenate(blocks_w), rtol=0, atol=1e-12)


def test_global_state_is_randomstate() -> None:
    """The released code draws from numpy's global state and scipy's ortho_group without a
    random_state: after np.random.seed(s) that is the RandomState(s) stream the replay uses."""
    saved = np.random.get_state()  # noqa: NPY002 (the released code's global state, restored)
    np.random.seed(77)  # noqa: NPY002
    try:
        glob = [np.random.chisquare(5, size=5), ortho_group.rvs(5), np.random.normal(size=3)]  # noqa: NPY002
    finally:
        np.random.set_state(saved)  # noqa: NPY002
    rs = np.random.RandomState(77)
    own = [rs.chisquare(5, size=5), ortho_group.rvs(5, random_state=rs), rs.normal(size=3)]
    assert all(np.array_equal(a, b) for a, b in zip(glob, own, strict=True))


def test_simplex_and_plus_directions() -> None:
    for d in (2, 3, 7, 16):
        S = released_simplex(d)
        gram = S @ S.T
        assert np.allclose(np.diag(gram), 1.0)
        assert np.allclose(gram[~np.eye(d, dtype=bool)], -1.0 / (d - 1))
        assert np.allclose(S[:, -1], 0.0)
        assert np.allclose(S, _simplex(d))
        # equal norms: the simplex already minimises Σ ρ_i ρ_j s_iᵀs_j (SimRF Eq. 17)
        assert np.allclose(plus_directions(S, np.full(d, 2.0)), S)
    rho = np.sqrt(np.random.default_rng(1).chisquare(7, size=7))
    S, P = released_simplex(7), plus_directions(released_simplex(7), rho)
    assert np.allclose(np.linalg.norm(P, axis=1), 1.0)
    assert np.sum(rho @ P) ** 2 < np.sum(rho @ S) ** 2  # ‖Σ ρ_i s_i‖² decreases


def test_hd_rotation_is_orthogonal() -> None:
    R = hd_rotation(np.random.RandomState(0), 16)
    assert np.allclose(R @ R.T, np.eye(16))


@pytest.fixture
def _data_env(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(data_dir))


@pytest.mark.slow
@pytest.mark.usefixtures("_data_env")
def test_classify_stream_released_end_to_end(tmp_path: Path) -> None:
    if not available("banknote") or not available("wifi"):
        pytest.skip("banknote/wifi not available locally")
    cfg = read_config_file(CONFIG)
    exp = Classify()
    config = exp.resolve_config(cfg.params_for("quick"), "quick", name=cfg.name, figure=cfg.figure)
    assert len(exp.grid(config)) == 2 * 2  # per data set: the exact kernel and one released job
    res = load_results(
        run(exp, config, RunOptions(out=tmp_path / "r.parquet", backend="serial", quiet=True))
    )
    rows = res[(res["dataset"] == "banknote") & (res["estimator"] != "exact")]
    rows = rows[rows["metric"] == "accuracy"].set_index("estimator")
    assert set(rows.index) == set(METHODS) and set(rows["stream"]) == {"released"}
    seed = int(rows["stream_seed"].iloc[0])
    data = prepared("banknote", "simrf", 42, True)
    s = default_sigma("banknote")
    trials = config["trials"]
    want = _released(s * data.train.X, data.Y, s * data.test.X, data.test.y, 1, trials, seed, False)
    for k, name in enumerate(METHODS):
        assert rows.loc[name, "value"] == pytest.approx(want[:, k].mean(), abs=1e-12)
        se = np.sqrt(want[:, k].var() / trials)
        assert rows.loc[name, "stderr"] == pytest.approx(se, abs=1e-12)


def test_released_stream_config_errors() -> None:
    exp = Classify()
    base = {"dataset": ["wine"], "stream": "released"}
    for bad in (
        {"stream": "paper"},
        {"estimators": ["trig@orf"]},
        {"protocol": "derf"},
        {"estimators": ["positive@orf-fast"], "pad": False},
    ):
        with pytest.raises(ConfigError):
            exp.validate_config(exp.resolve_config({**base, **bad}, "paper"))
