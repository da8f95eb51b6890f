"""Draw-and-apply speed of the batched library against a plain per-draw numpy loop.

The setting of issue 2: 128 projections, 10,000 independent draws of one pair (x, y) at d = 64,
‖x‖ = ‖y‖ = 1, θ = π/3. The "plain" side is written the way the papers' scripts are: one draw at a
time, a full d×d QR per orthogonal block, features then a dot product. Both sides are timed in the
same run; the numbers go to stdout as a table.

Usage: python benchmarks/bench_estimators.py [--draws 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from record import record

from rfbench.compute.experiments.shared import best_time
from rfbench.compute.features import registry
from rfbench.compute.features.theory import equal_norm_pair
from rfbench.compute.features.weights.mc import simplex_directions

D, M, N_LAMBDA = 64, 128, 8
CHUNK = 2_000


def _orthogonal_rows(rng: np.random.Generator, m: int, d: int, directions=None) -> np.ndarray:
    blocks = []
    for _ in range(-(-m // d)):
        q, r = np.linalg.qr(rng.standard_normal((d, d)))
        q = q * np.sign(np.diag(r))
        rows = q if directions is None else directions @ q
        blocks.append(np.sqrt(rng.chisquare(d, size=d))[:, None] * rows)
    return np.concatenate(blocks)[:m]


def plain_trig_iid(rng, x, y):
    w = rng.standard_normal((M, D))
    fx = np.exp(x @ x / 2) * np.concatenate([np.sin(w @ x), np.cos(w @ x)]) / np.sqrt(M)
    fy = np.exp(y @ y / 2) * np.concatenate([np.sin(w @ y), np.cos(w @ y)]) / np.sqrt(M)
    return fx @ fy


def _hyp(w, u):
    return (
        np.exp(-u @ u / 2) * np.concatenate([np.exp(w @ u), np.exp(-w @ u)]) / np.sqrt(2 * len(w))
    )


def plain_hyperbolic_orf(rng, x, y):
    w = _orthogonal_rows(rng, M, D)
    return _hyp(w, x) @ _hyp(w, y)


def plain_simrf(rng, x, y):
    w = _orthogonal_rows(rng, M, D, simplex_directions(D))
    fx = np.exp(w @ x - x @ x / 2) / np.sqrt(M)
    fy = np.exp(w @ y - y @ y / 2) / np.sqrt(M)
    return fx @ fy


def plain_angular_hybrid(rng, x, y):
    m = M // N_LAMBDA
    w_trig, w_hyp, tau = (rng.standard_normal((k, D)) for k in (m, m, N_LAMBDA))
    lam = np.mean(np.sign(tau @ x) != np.sign(tau @ y))
    trig = np.exp((x @ x + y @ y) / 2) * np.mean(np.cos(w_trig @ (x - y)))
    hyp = _hyp(w_hyp, x) @ _hyp(w_hyp, y)
    return lam * hyp + (1 - lam) * trig


CASES: list[tuple[str, dict, Callable]] = [
    ("trig@iid", {"m": M}, plain_trig_iid),
    ("hyperbolic@orf", {"m": M}, plain_hyperbolic_orf),
    ("positive@simrf", {"m": M}, plain_simrf),
    ("angular-hybrid@iid", {"m": M // N_LAMBDA, "n": N_LAMBDA}, plain_angular_hybrid),
]


def batched(name: str, kwargs: dict, draws: int, frame: int | None, seed: int = 0) -> np.ndarray:
    est = registry.get(name, kernel="softmax", **kwargs)
    x, y = equal_norm_pair(1.0, np.pi / 3, D)
    if frame is not None:
        x, y = x[:frame], y[:frame]
    out = []
    for rng in np.random.default_rng(seed).spawn(-(-draws // CHUNK)):
        size = min(CHUNK, draws - CHUNK * len(out))
        draw = est.sample(rng, d=D, draws=size, frame=frame)
        out.append(est.estimate(draw, x[None], y[None])[:, 0, 0])
    return np.concatenate(out)


def bench_case(
    name: str, kwargs: dict, plain: Callable, draws: int, repeat: int
) -> tuple[str, list[dict]]:
    """One row of the table (plain loop vs batched (full d) vs batched in a 2-D frame) and its
    timings as result rows."""
    x, y = equal_norm_pair(1.0, np.pi / 3, D)
    rng = np.random.default_rng(1)
    plain_vals: list[float] = []

    def run_plain() -> None:
        plain_vals[:] = [plain(rng, x, y) for _ in range(draws)]

    t_plain = best_time(run_plain, repeat)
    t_full = best_time(lambda: batched(name, kwargs, draws, None), repeat)
    t_frame = best_time(lambda: batched(name, kwargs, draws, 2), repeat)
    ours = batched(name, kwargs, draws, 2)
    line = (
        f"{name:<22}{t_plain:>13.3f}{t_full:>11.3f}{t_frame:>10.3f}"
        f"{t_plain / t_full:>12.1f}{t_plain / t_frame:>10.1f}"
        f"{np.mean(plain_vals):>11.4f}{ours.mean():>10.4f}"
    )
    rows = [
        {"estimator": name, "note": how, "metric": "time_s", "value": t, "baseline": how == "plain"}
        for how, t in (("plain", t_plain), ("batched", t_full), ("frame", t_frame))
    ]
    return line, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    x, y = equal_norm_pair(1.0, np.pi / 3, D)
    print(f"d={D}, {M} projections, {args.draws} draws of one pair, SM = {np.exp(x @ y):.4f}")
    print(
        f"{'estimator':<22}{'plain loop s':>13}{'batched s':>11}{'frame s':>10}"
        f"{'x (batched)':>12}{'x (frame)':>10}{'mean plain':>11}{'mean ours':>10}"
    )
    rows = []
    for name, kwargs, plain in CASES:
        line, case_rows = bench_case(name, kwargs, plain, args.draws, args.repeat)
        print(line, flush=True)
        rows += case_rows
    record("estimators", rows, vars(args))


if __name__ == "__main__":
    main()
