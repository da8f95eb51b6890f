"""Speed of a randomised QMC draw (Sobol', Halton, lattice) against an i.i.d. Gaussian draw.

Each sampler draws ``--draws`` independent sets of m rows in R^d at once (``sample``), as the
experiments do; CPU time (best of ``--repeat``, one BLAS thread) per draw and the ratio to
``iid`` (numpy's standard_normal for the same shape, plus the row norms every sampler returns)
go to stdout. The bar (issue 20): a Sobol' draw costs at most 1.5x an iid one at d = 64,
m = 128 (the HRF pointwise setting), 400 draws; d = 32, m = 128 is the Spectraformer grid's.
For Sobol' the parts are timed apart: the scrambled points and Φ⁻¹ (rfbench's
``ndtri_inplace``, and scipy.special.ndtri for comparison); the draw itself takes Φ⁻¹ of each
block of points while it is in cache, so it costs a little less than the parts' sum.

Usage: python benchmarks/bench_qmc.py [--draws 400] [--repeat 7]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from record import record
from scipy import special
from threadpoolctl import threadpool_limits

from rfbench.compute.features.registry import make_weights
from rfbench.compute.features.weights.ndtri import ndtri_inplace
from rfbench.compute.features.weights.scrambling import sobol_points

BAR = (64, 128)
SHAPES = [BAR, (32, 128)]
SAMPLERS = ["iid", "sobol", "halton", "lattice"]


def cpu_time(run, repeat: int) -> float:
    """Best CPU seconds of ``run()``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        run()
        best = min(best, time.process_time() - t0)
    return best


def shape_times(d: int, m: int, n: int, repeat: int) -> dict[str, float]:
    """CPU seconds of each sampler's n-draw call, and of the Sobol' draw's parts."""
    rng = np.random.default_rng(0)
    times = {
        s: cpu_time(lambda s=s: make_weights(s).sample(rng, d, m, n), repeat) for s in SAMPLERS
    }
    t = sobol_points(rng, d, m, n)
    copy = cpu_time(t.copy, repeat)  # the Φ⁻¹ timings below include one copy of t
    times["points"] = cpu_time(lambda: sobol_points(rng, d, m, n), repeat)
    times["Φ⁻¹"] = cpu_time(lambda: ndtri_inplace(t.copy()), repeat) - copy
    times["scipy ndtri"] = cpu_time(lambda: special.ndtri(t, out=t.copy()), repeat) - copy
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    n = args.draws
    print(f"QMC draw vs iid draw: {n} draws per call, CPU us per draw (x iid)")
    rows = []
    with threadpool_limits(1):
        for d, m in SHAPES:
            times = shape_times(d, m, n, args.repeat)
            rows += [
                {"estimator": k, "d": d, "m": m, "metric": "cpu_s", "value": v,
                 "baseline": k == "scipy ndtri"}
                for k, v in times.items()
            ]  # fmt: skip
            cells = {
                k: f"{k} {v / n * 1e6:7.1f} ({v / times['iid']:.2f}x)" for k, v in times.items()
            }
            bar = "  <- the bar: sobol <= 1.50x" if (d, m) == BAR else ""
            print(f"  d={d:<3} m={m:<4} " + "  ".join(cells[s] for s in SAMPLERS) + bar)
            parts = ("points", "Φ⁻¹", "scipy ndtri")
            print(" " * 17 + "sobol parts: " + "  ".join(cells[k] for k in parts))
    record("qmc", rows, vars(args))


if __name__ == "__main__":
    main()
