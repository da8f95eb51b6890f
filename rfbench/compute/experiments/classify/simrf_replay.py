"""Replay of the SimRF authors' released kernel-regression code, draw by draw (``stream =
"released"``; docs/experiments.md#simrf-table2-released; SimRF Sec. 5.3, Fig. 8, Tables 2-3).

One ``np.random.RandomState`` per job, its seed from the job's generator (column ``stream_seed``).
Each trial draws, in the released order, IIDRFs (N normal d × d blocks), ORFs (N times χ_d row
norms, then a rotation R), SimRFs (N times norms then R, rows ρ_i s_iᵀR, :func:`released_simplex`)
and SimRFs+ (norms once per trial, :func:`plus_directions`, then N times R), whichever are reported.
R is the installed scipy's ``ortho_group.rvs(d)`` (its algorithm changed in scipy 1.10) or, with
``fast``, the released ``approx_R``: H D₃ H D₂ H D₁ with unit rows, D_k = diag(sign(u − ½)) (SimRF
App. B.2). Scores are formed as Φ_test (Φ_trainᵀ Y) rather than (Φ_train Φ_testᵀ)ᵀ Y: equal up to
rounding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.linalg import hadamard
from scipy.stats import ortho_group

from rfbench.compute.experiments.base import ConfigError, JobSpec

STREAMS = ("rfbench", "released")
#: job estimators of the released stream: Haar rotations, or the HD product (``approx_R``)
RELEASED, RELEASED_FAST = "released", "released-fast"
#: the released code's four methods, in its per-trial draw order
METHODS = ("positive@iid", "positive@orf", "positive@simrf", "positive@simrf-plus")
#: the rows each released job reports (the fast run reports Table 3's two "Fast" columns)
ROWS = {
    RELEASED: dict(zip(METHODS, METHODS, strict=True)),
    RELEASED_FAST: {"positive@orf": "positive@orf-fast", "positive@simrf": "positive@simrf-fast"},
}
PLUS_SWEEPS = 5  # the released sim_plus_iter
CHUNK = 1 << 21  # most feature values (trials × rows × m) evaluated at once


def released_simplex(d: int) -> np.ndarray:
    """The released code's d unit simplex directions (rows), s_iᵀs_j = −1/(d−1) (SimRF Eq. 8).

    Rows i < d−1 are e_i/√2 − c·1 with c = (1 + 1/√d)/((d−1)√2), row d−1 is 1/√(2d)·1, the last
    coordinate of every row is 0; all rescaled by the norm of row 1.
    """
    c = (1.0 + 1.0 / np.sqrt(d)) / ((d - 1) * np.sqrt(2.0))
    S = np.full((d, d), -c)
    S[np.diag_indices(d)] += 1.0 / np.sqrt(2.0)
    S[d - 1] = 1.0 / np.sqrt(2.0 * d)
    S[:, d - 1] = 0.0
    return S / np.linalg.norm(S[1])


def plus_directions(S: np.ndarray, rho: np.ndarray, sweeps: int = PLUS_SWEEPS) -> np.ndarray:
    """SimRF+ directions for row norms ρ (SimRF Eq. 17, as released): ``sweeps`` passes over the
    rows in order, row i ← −r/‖r‖ with r = Σ_{j≠i} ρ_j s_j (rows already updated are used)."""
    S = S.copy()
    for _ in range(sweeps):
        for i in range(len(S)):
            r = rho @ S - rho[i] * S[i]
            S[i] = -r / np.linalg.norm(r)
    return S


def hd_rotation(rs: np.random.RandomState, d: int) -> np.ndarray:
    """The released fast rotation H D₃ H D₂ H D₁ / ‖row 0‖ (SimRF App. B.2, k = 3)."""
    H = hadamard(d).astype(float)
    signs = [np.sign(rs.random_sample(d) - 0.5) for _ in range(3)]
    M = np.eye(d)
    for s in signs:
        M = H @ (s[:, None] * M)
    return M / np.linalg.norm(M[0])


def trial_projections(
    rs: np.random.RandomState, S: np.ndarray, blocks: int, fast: bool
) -> list[np.ndarray]:
    """The (blocks·d, d) projections of one released trial for :data:`METHODS`, drawn in order."""
    d = len(S)

    def rotation() -> np.ndarray:
        return hd_rotation(rs, d) if fast else ortho_group.rvs(d, random_state=rs)

    def norms() -> np.ndarray:
        return np.sqrt(rs.chisquare(d, size=d))[:, None]

    iid = [rs.normal(0.0, 1.0, (d, d)) for _ in range(blocks)]
    orf = [norms() * rotation() for _ in range(blocks)]
    sim = [(norms() * S) @ rotation() for _ in range(blocks)]
    rho = norms()
    plus = rho * plus_directions(S, rho[:, 0])
    plus_blocks = [plus @ rotation() for _ in range(blocks)]
    return [np.concatenate(b) for b in (iid, orf, sim, plus_blocks)]


def accuracies(
    W: np.ndarray, Xtr: np.ndarray, Y: np.ndarray, Xte: np.ndarray, yte: np.ndarray
) -> np.ndarray:
    """Test accuracy per trial for projections W (trials, m, d) of σ-scaled inputs."""
    trials, m, d = W.shape
    flat = W.reshape(trials * m, d).T  # every trial's projections side by side: one product

    def features(X: np.ndarray) -> np.ndarray:  # (n, trials·m)
        return np.exp(X @ flat - np.sum(X * X, axis=1)[:, None]) / np.sqrt(m)

    per_class = (features(Xtr).T @ Y).reshape(trials, m, -1)
    scores = np.einsum("qtm,tmc->tqc", features(Xte).reshape(len(Xte), trials, m), per_class)
    return np.mean(np.argmax(scores, axis=-1) == yte, axis=-1)


def replay(
    Xtr: np.ndarray,
    Y: np.ndarray,
    Xte: np.ndarray,
    yte: np.ndarray,
    blocks: int,
    trials: int,
    seed: int,
    fast: bool = False,
) -> dict[str, np.ndarray]:
    """Per-trial test accuracies {method: (trials,)} of the released code's four methods with
    m = blocks·d features on σ-scaled inputs, replaying its stream from RandomState(seed)."""
    rs = np.random.RandomState(seed)
    S = released_simplex(Xtr.shape[1])
    out = {name: np.empty(trials) for name in METHODS}
    chunk = max(1, CHUNK // (len(Xtr) * blocks * len(S)))
    for t0 in range(0, trials, chunk):
        t1 = min(trials, t0 + chunk)
        draws = [trial_projections(rs, S, blocks, fast) for _ in range(t1 - t0)]
        for k, name in enumerate(METHODS):
            out[name][t0:t1] = accuracies(np.stack([p[k] for p in draws]), Xtr, Y, Xte, yte)
    return out


# ----------------------------------------------------------------------------- classify hooks


def check_config(config: Mapping[str, Any]) -> None:
    """ConfigError unless a ``stream = "released"`` config is one the released code can run."""
    if config["stream"] == "rfbench":
        return
    allowed = set(METHODS) | {n for rows in ROWS.values() for n in rows.values()}
    needs = {
        "protocol": (config["protocol"] == "simrf", "simrf (the released split)"),
        "kernel": (config["kernel"] == "gaussian", "gaussian"),
        "m_per_d": (config["m_per_d"], "true (the released m is a multiple of d)"),
        "estimators": (set(config["estimators"]) <= allowed, ", ".join(sorted(allowed))),
        "tune": (not config["tune"], "false"),
        "budget": (not config["budget"], "empty (the released m is a multiple of d)"),
    }
    for key, (ok, what) in needs.items():
        if not ok:
            raise ConfigError.bad_value(key, config[key], f"{what} with stream = released")
    fast = any(n.endswith("-fast") for n in config["estimators"])
    if fast and not config["pad"]:
        raise ConfigError.bad_value("pad", config["pad"], "true for the released fast rotation")


def released_jobs(jobs: Sequence[JobSpec], estimators: Sequence[str]) -> list[JobSpec]:
    """Classify's jobs with the per-estimator random-feature jobs replaced by one released job per
    (data set, σ, m) and rotation (every trial draws all four methods, as released)."""
    kinds = [RELEASED] if set(estimators) & set(METHODS) else []
    kinds += [RELEASED_FAST] if any(n.endswith("-fast") for n in estimators) else []
    out: list[JobSpec] = []
    for job in jobs:
        if job["estimator"] == "exact":
            out.append(job)
        elif job["estimator"] == estimators[0]:
            rest = {k: v for k, v in job.items() if k != "estimator"}
            out += [JobSpec(rest, estimator=kind, stream="released") for kind in kinds]
    return out


def released_rows(spec: JobSpec, data: Any, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Accuracy rows of one released job (data: classify_data.Prepared)."""
    seed = int(rng.integers(2**32))
    sigma, blocks = spec["sigma"], int(spec["m"])
    fast = spec["estimator"] == RELEASED_FAST
    acc = replay(
        sigma * data.train.X, data.Y, sigma * data.test.X, data.test.y,
        blocks, spec["trials"], seed, fast,
    )  # fmt: skip
    rows = []
    for method, name in ROWS[spec["estimator"]].items():
        a = acc[method]
        rows.append({
            "estimator": name, "m": blocks * data.d, "m_per_d": float(blocks), "sigma": sigma,
            "metric": "accuracy", "value": float(a.mean()),
            "stderr": float(np.sqrt(a.var() / len(a))), "n_trials": len(a),
            "stream": "released", "stream_seed": seed,
        })  # fmt: skip
    return rows
