"""Benchmark timings as rfbench result files, so that two runs compare with ``rfbench compare``.

Each benchmark writes ``<RFBENCH_BENCH_OUT>/bench/<name>.parquet`` (default folder ``runs/bench``;
``make bench`` uses ``runs/bench-<commit>``): one tidy row per measured case and metric
(``cpu_s`` or ``time_s``, timing metrics that ``rfbench compare`` reports as
ratios and never flags as changed numbers). Rows of a baseline (the plain code a paper's script
would use) carry ``baseline = True``; the file's provenance timing is the sum over rfbench's own
rows, so ``rfbench compare runs/bench-A runs/bench-B --fail-on slower:1.5`` fails when rfbench got
slower, not when a baseline did.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rfbench.compute.results import make_provenance, result_path, write_results

#: where benchmarks write their result files (``make bench`` sets it per commit)
OUT_ENV = "RFBENCH_BENCH_OUT"


def record(name: str, rows: Sequence[Mapping[str, Any]], config: Mapping[str, Any]) -> Path:
    """Write a benchmark's measurements and return the file's path.

    Parameters
    ----------
    name : str
        The benchmark (the file is ``bench/<name>.parquet``).
    rows : sequence of mappings
        Each with ``estimator`` (the measured case), ``metric`` and ``value``; optionally
        ``baseline`` (bool), ``n_trials`` (repetitions behind the value) and parameter columns
        such as ``d`` and ``m``.
    config : mapping
        The benchmark's settings (its command-line arguments), kept in the provenance.

    Returns
    -------
    Path
        The result file.
    """
    df = pd.DataFrame(
        [
            {
                "experiment": "bench",
                "figure": "",
                "kernel": "",
                "stderr": None,
                "n_trials": 1,
                "baseline": False,
                **row,
            }  # fmt: skip
            for row in rows
        ]
    )
    own = df[~df["baseline"].astype(bool)]
    timing = {
        key: float(own.loc[own["metric"] == metric, "value"].sum())
        for key, metric in (("jobs_cpu_s", "cpu_s"), ("jobs_wall_s", "time_s"))
        if (own["metric"] == metric).any()
    }
    prov = make_provenance(config={"bench": name, **config}, seed=0, timing=timing)
    path = result_path(os.environ.get(OUT_ENV, "runs/bench"), "bench", name)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_results(df, path, prov)
    print(f"bench results: {path}", file=sys.stderr)
    return path
