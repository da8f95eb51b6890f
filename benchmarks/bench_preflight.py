"""Wall and CPU time of ``rfbench reproduce``'s checks before the first job, per config.

Every config of ``configs/`` is checked as ``reproduce`` checks it
(rfbench.compute.runner.preflight.prepare: memory, grid, data, value-range probes, outputs) into a
temporary folder, with a cold job cache (a temporary ``RFBENCH_CACHE``, so that work a check does
once per cache, such as a model's activations, is timed too). Prints each config's seconds and the
range probes' share (rfbench.compute.runner.ranges), largest first, and records
``bench/preflight.parquet``. The checks run in this one process: their wall time is time both
workers of the run wait.

Usage: python benchmarks/bench_preflight.py [--profile paper] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from record import record


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="paper")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    start = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="rfbench-preflight-") as scratch:
        os.environ["RFBENCH_CACHE"] = str(Path(scratch) / "cache")
        from rfbench.cli.experiments import config_files, data_unavailable
        from rfbench.compute.runner import default_out, preflight, resolve_file
        from rfbench.compute.runner.options import RunOptions

        probes: dict[str, tuple[float, float]] = {}
        check_ranges = preflight.check_ranges
        current = {"config": ""}

        def timed_ranges(experiment, specs, *rest) -> None:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                check_ranges(experiment, specs, *rest)
            finally:
                probes[current["config"]] = (time.perf_counter() - wall, time.process_time() - cpu)

        preflight.check_ranges = timed_ranges
        rows, skipped = [], []
        for path in config_files():
            wall, cpu = time.perf_counter(), time.process_time()
            try:  # a config whose data is not here is skipped, as reproduce skips it
                experiment, config = resolve_file(path, args.profile)
                current["config"] = config["name"]
                out = default_out(experiment.name, config["name"], Path(scratch) / "out")
                options = RunOptions(out=out, workers=args.workers, force=True, quiet=True)
                with preflight.prepare(experiment, config, options):
                    pass
            except Exception as exc:
                missing = data_unavailable(exc)
                if missing is None:
                    raise
                skipped.append(f"{path.parent.name}/{path.name} ({missing.dataset})")
                continue
            rows.append({"config": config["name"], "wall_s": time.perf_counter() - wall,
                         "cpu_s": time.process_time() - cpu})  # fmt: skip
    total_wall, total_cpu = time.perf_counter() - start[0], time.process_time() - start[1]
    if skipped:
        print(f"skipped {len(skipped)} configs whose data is not here: {', '.join(skipped)}")
    print(f"checks of {len(rows)} configs ({args.profile}): wall {total_wall:.1f} s, "
          f"CPU {total_cpu:.1f} s (imports included)")  # fmt: skip
    print(f"  {'config':<30}{'wall s':>8}{'CPU s':>8}{'probes wall':>13}{'probes CPU':>12}")
    for r in sorted(rows, key=lambda r: -r["wall_s"]):
        pw, pc = probes.get(r["config"], (0.0, 0.0))
        if r["wall_s"] >= 0.05:
            print(f"  {r['config']:<30}{r['wall_s']:8.2f}{r['cpu_s']:8.2f}{pw:13.2f}{pc:12.2f}")
    label = f"rfbench reproduce --profile {args.profile} checks"
    out_rows = [{"estimator": label, "metric": "time_s", "value": total_wall},
                {"estimator": label, "metric": "cpu_s", "value": total_cpu}]  # fmt: skip
    out_rows += [{"estimator": r["config"], "metric": "time_s", "value": r["wall_s"]} for r in rows]
    record("preflight", out_rows, vars(args))


if __name__ == "__main__":
    main()
