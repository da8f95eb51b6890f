"""Structured (fast Walsh–Hadamard) vs dense projection of the Hadamard couplings.

For SORF, ``orf-fast``, ``simrf-fast`` and FastFood with m = d′ projections (one block), the
time of ``project`` on ``--points`` inputs in R^d by the Hadamard chain (O(d′ log d′) per input,
fht-cpu if installed, else numpy) and by the dense product X Wᵀ (O(m·d)); best wall time of
``--repeat`` on one BLAS thread, and the ratio dense / structured. The bar (issue 20) is a ratio
≥ 4 at d = 1024.

Usage: python benchmarks/bench_structured.py [--points 4096] [--repeat 5] [--numpy]
"""

from __future__ import annotations

import argparse

import numpy as np
from record import record
from threadpoolctl import threadpool_limits

from rfbench.compute.experiments.shared import best_time
from rfbench.compute.features.registry import make_weights
from rfbench.compute.features.weights import hadamard

DIMS = [32, 64, 128, 256, 512, 1024]
SAMPLERS = ["sorf", "orf-fast", "simrf-fast", "fastfood"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--numpy", action="store_true", help="the numpy transform, not fht-cpu")
    args = ap.parse_args()
    use = False if args.numpy else None
    kernel = "numpy" if args.numpy or not hadamard.HAVE_FHT_CPU else "fht-cpu"
    print(
        f"structured ({kernel}) vs dense projection, {args.points} points, m = d: "
        "ms structured/dense (speed-up dense/structured)"
    )
    rng, rows = np.random.default_rng(0), []
    with threadpool_limits(1):
        for name in SAMPLERS:
            cells = []
            for d in DIMS:
                proj = make_weights(name).sample(rng, d, d, 1)
                X = rng.standard_normal((args.points, d))
                fast = best_time(lambda p=proj, x=X: p.chain.apply(x, use), args.repeat)
                dense = best_time(lambda p=proj, x=X: p.with_fast(False).project(x), args.repeat)
                cells.append(f"d={d} {fast * 1e3:.1f}/{dense * 1e3:.1f} ({dense / fast:.1f}x)")
                rows += [
                    {"estimator": f"{name} {how}", "d": d, "metric": "time_s", "value": t,
                     "baseline": how == "dense"}
                    for how, t in ((kernel, fast), ("dense", dense))
                ]  # fmt: skip
            print(f"  {name:<10} " + "  ".join(cells))
    record("structured", rows, vars(args))


if __name__ == "__main__":
    main()
