"""Classification time per trial: rfbench against the bare exp+matmul limit and a plain loop.

One trial of kernel-regression classification (SimRF §5.3) with positive@iid features: the
training features exp(Xωᵀ - ‖x‖²) (N_train × M exponentials, an N_train × d × M product), their
reduction Ψᵀ Y, the test side and the argmax. Rows, per trial, CPU and wall milliseconds with BLAS
on one thread (as in the runner's workers):

- bare float32 / float64: that arithmetic alone in numpy, one trial at a time (the limit);
- plain loop: the papers' scripts' form, per trial the dense float64 features and the kernel
  matrix Φ_train Φ_testᵀ, then argmax((Φ_train Φ_testᵀ)ᵀ Y);
- rfbench auto / float64: ``rf_accuracies`` over a batch of draws (merged draws, row chunks,
  per-column log-domain shifts; auto = float32 with the float64 fallback).

Cases: chess at m = 10d (M = 400, 26,653 training rows) and wifi at m = d (M = 7, 1,900 rows:
per-trial overheads dominate); and chess with DERF Fig. 3's random-phase TrigRF √2 cos(ωᵀx + b) at
its largest σ = 100 (M = 128), where ``auto`` runs in float32 since the row terms are summed in
float64 (it used to fall back to float64 there); its plain loop is the same form with cosines.
``measure()`` returns the rows; ``main()`` prints them.

Usage: python benchmarks/bench_classify.py [--trials 20]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from record import record
from threadpoolctl import threadpool_limits

from rfbench.compute.experiments.classify.data import default_sigma, prepared
from rfbench.compute.experiments.classify.kernel_regression import rf_accuracies
from rfbench.compute.features import registry

CASES: tuple[tuple[str, int, int], ...] = (("chess", 10, 1), ("wifi", 1, 50))
#: (data set, M, σ) of the random-phase TrigRF case (DERF Fig. 3's largest σ)
TRIG_CASE = ("chess", 128, 100.0)


@dataclass(frozen=True)
class Row:
    """Per-trial milliseconds of one method on one case."""

    case: str
    method: str
    cpu_ms: float
    wall_ms: float
    accuracy: float


def _timed(fn: Callable[[], np.ndarray], trials: int) -> tuple[float, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    acc = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return 1e3 * cpu / trials, 1e3 * wall / trials, float(np.mean(acc))


def bare(W: np.ndarray, X, Y, Xq, yq, dtype) -> np.ndarray:
    """The limit: exponentials and products of each trial, nothing else (column shifts only)."""
    X, Xq, Y = (np.ascontiguousarray(a, dtype=dtype) for a in (X, Xq, Y))
    r = -np.einsum("ij,ij->i", X, X)[:, None]
    out = []
    for w in W.astype(dtype):
        A = X @ w.T
        A += r
        c = A.max(axis=0)
        A -= c
        np.exp(A, out=A)
        S = A.T @ Y
        B = Xq @ w.T
        B += c
        B -= B.max(axis=1, keepdims=True)
        np.exp(B, out=B)
        out.append(np.mean(np.argmax(B @ S, axis=1) == yq))
    return np.array(out)


def plain_loop(W: np.ndarray, X, Y, Xq, yq) -> np.ndarray:
    """The papers' scripts' form: dense float64 features, the train × test kernel matrix."""
    out = []
    for w in W:
        # Gaussian PRFs: e^{-‖x‖²/2} · e^{ωᵀx - ‖x‖²/2} / √M
        phi_tr = np.exp(X @ w.T - np.sum(X**2, axis=1)[:, None]) / np.sqrt(len(w))
        phi_te = np.exp(Xq @ w.T - np.sum(Xq**2, axis=1)[:, None]) / np.sqrt(len(w))
        K = phi_tr @ phi_te.T
        out.append(np.mean(np.argmax(K.T @ Y, axis=1) == yq))
    return np.array(out)


def plain_trig_loop(W: np.ndarray, b: np.ndarray, X, Y, Xq, yq) -> np.ndarray:
    """The same form with the random-phase TrigRF √(2/M) cos(ωᵀx + b) of the Gaussian kernel."""
    out = []
    for w, phase in zip(W, b, strict=True):
        phi_tr = np.sqrt(2.0 / len(w)) * np.cos(X @ w.T + phase)
        phi_te = np.sqrt(2.0 / len(w)) * np.cos(Xq @ w.T + phase)
        out.append(np.mean(np.argmax((phi_tr @ phi_te.T).T @ Y, axis=1) == yq))
    return np.array(out)


def _trig_rows(trials: int) -> list[Row]:
    name, m, s = TRIG_CASE
    data = prepared(name, "derf", 42, False)
    X, Xq, yq, Y = s * data.train.X, s * data.test.X, data.test.y, data.Y
    est = registry.get("trig-phase@orf", kernel="gaussian", m=m)
    proj = est.sample(np.random.default_rng(0), data.d, draws=trials).projections["omega"]
    case = f"{name} trig-phase@orf σ={s:g} (M={m}, N={len(X)})"
    sets = (X, Y, Xq, yq)
    methods: dict[str, Callable[[], np.ndarray]] = {
        "plain loop (papers' form)": partial(plain_trig_loop, proj.W, proj.phase, *sets),
        "rfbench auto (float32)": partial(rf_accuracies, est, proj, {}, *sets, "auto"),
        "rfbench float64": partial(rf_accuracies, est, proj, {}, *sets),
    }
    return [Row(case, method, *_timed(fn, trials)) for method, fn in methods.items()]


def measure(trials: int = 20) -> list[Row]:
    """Per-trial times of every method on every case (BLAS on one thread)."""
    rows = []
    with threadpool_limits(limits=1):
        for name, m_per_d, scale in CASES:
            data = prepared(name, "simrf", 42, True)
            s = default_sigma(name)
            X, Xq, yq, Y = s * data.train.X, s * data.test.X, data.test.y, data.Y
            n = trials * scale
            est = registry.get("positive@iid", kernel="gaussian", m=m_per_d * data.d)
            proj = est.sample(np.random.default_rng(0), data.d, draws=n).projections["omega"]
            case = f"{name} m={m_per_d}d (M={est.m}, N={len(X)})"
            sets = (X, Y, Xq, yq)
            methods: dict[str, Callable[[], np.ndarray]] = {
                "bare float32": partial(bare, proj.W, *sets, np.float32),
                "bare float64": partial(bare, proj.W, *sets, np.float64),
                "plain loop (papers' form)": partial(plain_loop, proj.W, *sets),
                "rfbench auto (float32)": partial(rf_accuracies, est, proj, {}, *sets, "auto"),
                "rfbench float64": partial(rf_accuracies, est, proj, {}, *sets),
            }
            for method, fn in methods.items():
                rows.append(Row(case, method, *_timed(fn, n)))
        rows += _trig_rows(trials)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20, help="trials per case (x50 for wifi)")
    args = ap.parse_args()
    rows = measure(args.trials)
    print("Classification, time per trial (positive@iid unless named, BLAS 1 thread)")
    head = f"{'CPU ms':>9}{'wall ms':>9}{'/bare32':>9}{'plain/this':>11}{'acc':>7}"
    print(f"{'case / method':<34}{head}")
    for case in dict.fromkeys(r.case for r in rows):
        sub = {r.method: r for r in rows if r.case == case}
        ref, plain = sub.get("bare float32"), sub["plain loop (papers' form)"].cpu_ms
        print(case)
        for r in sub.values():
            to_bare = f"{r.cpu_ms / ref.cpu_ms:>9.2f}" if ref else f"{'—':>9}"
            print(
                f"  {r.method:<32}{r.cpu_ms:>9.3f}{r.wall_ms:>9.3f}{to_bare}"
                f"{plain / r.cpu_ms:>11.1f}{r.accuracy:>7.3f}"
            )
    record("classify", [
        {"estimator": r.method, "dataset": r.case, "metric": metric, "value": value,
         "baseline": not r.method.startswith("rfbench")}
        for r in rows
        for metric, value in (("cpu_s", r.cpu_ms / 1e3), ("time_s", r.wall_ms / 1e3))
    ], vars(args))  # fmt: skip


if __name__ == "__main__":
    main()
