"""Wall and CPU time of the whole paper-profile reproduction (``rfbench reproduce``).

Runs ``rfbench reproduce --profile paper --workers 2 --force --quiet`` into a temporary folder (the
committed results/ are touched only with ``--out-dir results``) and prints its wall time and the
CPU time of the child processes. ``make bench-reproduce`` or ``make bench REPRODUCE=1``.

Usage: python benchmarks/bench_reproduce.py [--workers 2] [--profile paper] [--out-dir DIR]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="paper")
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
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        wall = time.perf_counter() - t0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = kids.ru_utime + kids.ru_stime
    print(f"rfbench reproduce --profile {args.profile} --workers {args.workers}:")
    print(f"  wall {wall / 60:.1f} min ({wall:.0f} s), CPU {cpu / 60:.1f} min")
    label = f"rfbench reproduce --profile {args.profile} --workers {args.workers}"
    rows = [{"estimator": label, "metric": "time_s", "value": wall},
            {"estimator": label, "metric": "cpu_s", "value": cpu}]  # fmt: skip
    record("reproduce", rows, vars(args))


if __name__ == "__main__":
    main()
