"""CPU time of fitting the learned feature maps (``hedgehog``, ``t2r``) to one attention head.

The beyond-attention-learned config fits both maps (and window+hedgehog's) on 72 heads at
T = 512 tokens, d = 32, F = 64 features: about 0.8 CPU s per head each, a tenth of the paper
reproduction's CPU time. This times one objective evaluation (the attention KL and its gradient,
rfbench.compute.features.learned_fit.attention_kl) and one whole fit (L-BFGS-B, the estimators'
ITERS iterations) on a head-shaped pair of synthetic queries and keys, best of ``--repeats``, and
records them as ``bench/learned-fit.parquet``.

Usage: python benchmarks/bench_learned_fit.py [--tokens 512] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from record import record

from rfbench.compute.features import learned_fit as lf
from rfbench.compute.features.learned import ITERS, T2R, Hedgehog

#: head dimension of all-MiniLM-L6-v2 (384 / 12 heads) and the config's feature budget
D, FEATURES = 32, 64


def best_cpu(fn, repeats: int) -> float:
    """Smallest CPU seconds of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    Q, K = (0.6 * rng.standard_normal((args.tokens, D)) for _ in range(2))
    target = lf.Target.of(Q, K)
    rows = []
    for cls in (Hedgehog, T2R):
        p = FEATURES // cls.features_per_projection
        theta = lf.initial_theta(np.random.default_rng(1), D, p)
        theta += 0.01 * rng.standard_normal(theta.shape)

        def evaluations(cls=cls, p=p, theta=theta, n=50) -> None:
            for _ in range(n):
                lf.attention_kl(theta, target, cls.fmap, p, cls.loss_eps)

        def fit(cls=cls, p=p) -> None:
            lf.fit_map(Q, K, cls.fmap, p, np.random.default_rng(1), ITERS, cls.loss_eps)

        per_eval = best_cpu(evaluations, args.repeats) / 50
        per_fit = best_cpu(fit, args.repeats)
        print(f"{cls.family:>9}: {per_eval * 1e3:.2f} ms per evaluation, {per_fit:.2f} s per fit "
              f"(T = {args.tokens}, d = {D}, {FEATURES} features, {ITERS} iterations)")  # fmt: skip
        common = {"estimator": cls.family, "d": D, "m": p, "tokens": args.tokens}
        rows += [{**common, "metric": "cpu_s", "case": "evaluation", "value": per_eval},
                 {**common, "metric": "cpu_s", "case": "fit", "value": per_fit}]  # fmt: skip
    record("learned-fit", rows, vars(args))


if __name__ == "__main__":
    main()
