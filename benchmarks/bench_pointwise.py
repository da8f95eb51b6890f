"""Speed of the HRF Fig. 2 pointwise experiment (paper profile) against a plain per-draw loop.

Ours: ``rfbench.compute.runner.run`` on configs/hrf/fig2.toml, profile paper (4 estimators x r in
{1, 1.5} x 25 angles x 10,000 draws), serial and with the process backend. The plain side is written
the way the papers' scripts are: for every (estimator, r, θ) and every draw, full 64 x m Gaussian
projections, the feature maps of x and y, then their dot product (trig and SM++ with 128
projections, angular and Gaussian hybrids with (m, n) = (16, 8)). The plain loop is timed on
``--plain-samples`` draws per angle and extrapolated LINEARLY to 10,000 (per-draw cost is
constant: every iteration does the same work). Wall and CPU times go to stdout with the ratios.

Usage: python benchmarks/bench_pointwise.py [--plain-samples 200] [--workers 2] [--no-parallel]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_estimators import N_LAMBDA, D, M, _hyp, plain_angular_hybrid, plain_trig_iid
from record import record

from rfbench.compute.features.theory import equal_norm_pair
from rfbench.compute.runner import RunOptions, resolve_file, run

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "hrf" / "fig2.toml"


def plain_hyperbolic_iid(rng, x, y):
    w = rng.standard_normal((M, D))
    return _hyp(w, x) @ _hyp(w, y)


def plain_gaussian_hybrid(rng, x, y, sigma: float = 1.0):
    """HRF App. F, Eq. 69: λ̂ = (1 - (1/n)Σcos(σ τᵀ(x-y)))/ρ, ρ = 1 - e^{-2σ²r²} (‖x‖ = r)."""
    m = M // N_LAMBDA
    w_trig, w_hyp, tau = (rng.standard_normal((k, D)) for k in (m, m, N_LAMBDA))
    rho = 1 - np.exp(-2 * sigma**2 * (x @ x))
    lam = (1 - np.mean(np.cos(sigma * tau @ (x - y)))) / rho
    trig = np.exp((x @ x + y @ y) / 2) * np.mean(np.cos(w_trig @ (x - y)))
    hyp = _hyp(w_hyp, x) @ _hyp(w_hyp, y)
    return lam * hyp + (1 - lam) * trig


PLAIN: dict[str, Callable] = {
    "trig@iid": plain_trig_iid,
    "hyperbolic@iid": plain_hyperbolic_iid,
    "angular-hybrid@iid": plain_angular_hybrid,
    "gaussian-hybrid@iid": plain_gaussian_hybrid,
}


def timed(fn: Callable[[], object]) -> tuple[float, float, object]:
    """(wall s, CPU s of this process and its finished children, result)."""
    import resource

    def cpu() -> float:
        own, kids = (
            resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    t0, c0 = time.perf_counter(), cpu()
    out = fn()
    return time.perf_counter() - t0, cpu() - c0, out


def plain_loop(config: dict, per_angle: int) -> dict[str, float]:
    """Run the plain loop on ``per_angle`` draws per (estimator, r, θ); max rel. RMSE per curve."""
    rng = np.random.default_rng(1)
    thetas = np.linspace(0, np.pi, config["angles"])
    worst = {}
    for r in config["r"]:
        xs, ys = equal_norm_pair(r, thetas, config["d"])
        for name in config["estimators"]:
            errs = []
            for x, y in zip(xs, ys, strict=True):
                vals = np.array([PLAIN[name](rng, x, y) for _ in range(per_angle)])
                errs.append(np.sqrt(np.mean((vals - np.exp(x @ y)) ** 2)) / np.exp(x @ y))
            worst[f"{name} r={r}"] = max(errs)
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plain-samples", type=int, default=200, help="plain-loop draws per angle")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-parallel", action="store_true", help="skip the process-backend run")
    args = ap.parse_args()
    exp, config = resolve_file(CONFIG, "paper")
    samples = config["samples"]
    draws = samples * config["angles"] * len(config["r"]) * len(config["estimators"])
    print(f"HRF Fig. 2 paper profile: {draws:,} estimates ({samples:,} per angle)")

    out = Path(tempfile.mkdtemp()) / "fig2.parquet"
    w_ser, c_ser, _ = timed(
        lambda: run(exp, config, RunOptions(out=out, backend="serial", quiet=True))
    )
    rows = [("rfbench, serial", w_ser, c_ser)]
    if not args.no_parallel:
        w_par, c_par, _ = timed(
            lambda: run(
                exp,
                config,
                RunOptions(
                    out=out, backend="processes", workers=args.workers, quiet=True, force=True
                ),
            )
        )
        rows.append((f"rfbench, processes x{args.workers}", w_par, c_par))

    w_pl, c_pl, worst = timed(lambda: plain_loop(config, args.plain_samples))
    scale = samples / args.plain_samples
    rows.append(
        (f"plain loop x{scale:g} (from {args.plain_samples}/angle)", w_pl * scale, c_pl * scale)
    )

    print(f"{'':<38}{'wall s':>9}{'CPU s':>9}{'plain/this (wall)':>19}{'(CPU)':>8}")
    for label, wall, cpu in rows:
        ratios = f"{w_pl * scale / wall:>19.1f}{c_pl * scale / cpu:>8.1f}"
        print(f"{label:<38}{wall:>9.2f}{cpu:>9.2f}{ratios}")
    record("pointwise", [
        {"estimator": label, "metric": metric, "value": value,
         "baseline": label.startswith("plain")}
        for label, wall, cpu in rows
        for metric, value in (("cpu_s", cpu), ("time_s", wall))
    ], vars(args))  # fmt: skip
    print("plain-loop max relative RMSE over θ (sanity, subsample):")
    for key, value in worst.items():
        print(f"  {key:<28}{value:.3f}")


if __name__ == "__main__":
    main()
