"""Speed of a randomised QMC draw (Sobol', Halton, lattice) against an i.i.d. Gaussian draw.

Each sampler draws ``--draws`` independent sets of m rows in R^d at once (``sample``), as the
experiments do; CPU time (best of ``--repeat``, one BLAS thread) per draw and the ratio to
``iid`` go to stdout. The shapes are the Spectraformer grid's (d = 32, m = 128) and the HRF
pointwise setting's (d = 64, m = 128).

Usage: python benchmarks/bench_qmc.py [--draws 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from record import record
from threadpoolctl import threadpool_limits

from rfbench.features.registry import make_weights

SHAPES = [(32, 128), (64, 128)]
SAMPLERS = ["iid", "sobol", "halton", "lattice"]


def cpu_time(name: str, d: int, m: int, draws: int, repeat: int) -> float:
    """Best CPU seconds of one ``sample`` call of ``draws`` draws."""
    sampler, rng = make_weights(name), np.random.default_rng(0)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        sampler.sample(rng, d, m, draws)
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"QMC draw vs iid draw: {args.draws} draws per call, CPU us per draw (x iid)")
    rows = []
    with threadpool_limits(1):
        for d, m in SHAPES:
            times = {s: cpu_time(s, d, m, args.draws, args.repeat) for s in SAMPLERS}
            rows += [
                {"estimator": s, "d": d, "m": m, "metric": "cpu_s", "value": times[s]}
                for s in SAMPLERS
            ]
            cells = [
                f"{s} {times[s] / args.draws * 1e6:7.1f} ({times[s] / times['iid']:.2f}x)"
                for s in SAMPLERS
            ]
            print(f"  d={d:<3} m={m:<4} " + "  ".join(cells))
    record("qmc", rows, vars(args))


if __name__ == "__main__":
    main()
