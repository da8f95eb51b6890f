"""Wall and CPU time of the whole paper-profile reproduction (``rfbench reproduce``).

Runs ``rfbench reproduce --profile paper --workers 2 --force --quiet`` into a temporary folder (the
committed results/ are touched only with ``--out-dir results``) and prints its wall time, the
CPU time of the child processes and where that time went: each config's CPU and wall seconds,
read from its result file's provenance, largest first. Records ``bench/reproduce.parquet`` (the
whole run) and ``bench/reproduce-configs.parquet`` (one row per config, so ``rfbench compare``
of two bench folders gives per-config ratios). ``make bench-reproduce`` or ``make bench
REPRODUCE=1``.

Usage: python benchmarks/bench_reproduce.py [--workers 2] [--profile paper] [--stop fixed]
       [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import record

from rfbench.compute.results import load_provenance, result_paths


def config_timings(folder: str | Path) -> list[dict[str, object]]:
    """Per result file of ``folder``: the config's name, this run's CPU and wall seconds
    (provenance ``timing``; cached jobs cost nothing) and its idle seconds: the wall time beyond
    its computed jobs' wall seconds shared by its workers (the wait for its last jobs, starting
    the pool, writing the file), largest CPU first."""
    rows = []
    for path in result_paths(folder):
        prov = load_provenance(path)
        timing = prov.get("timing") or {}
        name = (prov.get("config") or {}).get("name") or path.stem
        wall = float(timing.get("wall_s") or 0.0)
        jobs = zip(timing.get("job_wall_s") or [], timing.get("job_cached") or [], strict=False)
        busy = sum(w for w, cached in jobs if w is not None and not cached)
        idle = wall - busy / max(int(prov.get("workers") or 1), 1)
        rows.append({"config": name, "cpu_s": float(timing.get("cpu_s") or 0.0), "wall_s": wall,
                     "idle_s": idle})  # fmt: skip
    return sorted(rows, key=lambda r: -r["cpu_s"])


def print_breakdown(rows: list[dict[str, object]]) -> None:
    """Each config's share of the CPU time, with the running total, and the idle seconds."""
    total = sum(r["cpu_s"] for r in rows) or 1.0
    running = 0.0
    print(f"  {'config':<26}{'CPU s':>8}{'wall s':>8}{'share':>7}{'cum.':>7}{'idle s':>8}")
    for r in rows:
        running += r["cpu_s"]
        print(f"  {r['config']:<26}{r['cpu_s']:8.1f}{r['wall_s']:8.1f}"
              f"{r['cpu_s'] / total:7.1%}{running / total:7.1%}{r['idle_s']:8.1f}")  # fmt: skip
    print(f"  idle: {sum(r['idle_s'] for r in rows):.1f} s of the configs' wall time")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="paper")
    ap.add_argument(
        "--stop",
        choices=("fixed", "resolved"),
        help="the stopping rule of every config that has one (default: each config's own), e.g. "
        "fixed to time what the sequential rule saves",
    )
    ap.add_argument(
        "--out-dir",
        help="keep the results in this folder (e.g. results, to time the regeneration of the "
        "committed results); default: a temporary folder, removed afterwards",
    )
    args = ap.parse_args()
    rfbench = Path(sys.executable).with_name("rfbench")
    with tempfile.TemporaryDirectory(prefix="rfbench-bench-") as scratch:
        out = args.out_dir or scratch
        cmd = [str(rfbench), "reproduce", "--profile", args.profile, "--out-dir", out]
        cmd += ["--workers", str(args.workers), "--force", "--quiet"]
        cmd += ["--replace"] if args.out_dir else []  # a kept folder is regenerated whole
        cmd += ["--stop", args.stop] if args.stop else []
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        wall = time.perf_counter() - t0
        configs = config_timings(out)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = kids.ru_utime + kids.ru_stime
    stop = f" --stop {args.stop}" if args.stop else ""
    print(f"rfbench reproduce --profile {args.profile} --workers {args.workers}{stop}:")
    print(f"  wall {wall / 60:.1f} min ({wall:.0f} s), CPU {cpu / 60:.1f} min")
    label = f"rfbench reproduce --profile {args.profile} --workers {args.workers}{stop}"
    rows = [{"estimator": label, "metric": "time_s", "value": wall},
            {"estimator": label, "metric": "cpu_s", "value": cpu}]  # fmt: skip
    record("reproduce", rows, vars(args))
    print_breakdown(configs)
    pairs = (("cpu_s", "cpu_s"), ("time_s", "wall_s"))
    per_config = [
        {"estimator": c["config"], "metric": metric, "value": c[key]}
        for c in configs
        for metric, key in pairs
    ]
    record("reproduce-configs", per_config, vars(args))


if __name__ == "__main__":
    main()
