"""Every experiment estimates its largest job's memory, and the budget honours ``ulimit -v`` and
the cgroup limit (rfbench.compute.memlimits, rfbench.compute.runner.memory).

The oversized runs execute in a child process whose address space is capped (tests/capped.py):
exit 2 with the refusal there proves nothing large was allocated.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from capped import run_capped

from rfbench.compute import memlimits
from rfbench.compute.experiments import ConfigError, get_experiment
from rfbench.compute.runner import expand_grid
from rfbench.compute.runner.memory import check_memory

#: one oversized parameter per experiment (attention needs a model: tests/experiments)
OVERSIZED = [
    ["variance", "--points", "10000000"],
    ["qmc", "--reps", "100000000000"],
    ["precision", "--projection-budget", "100000000"],
    ["cost", "--points", "10000000"],
    ["clusters", "--m", "100000000"],
    ["theory", "--hrf-r-points", "100000000"],
    ["pointwise", "--d", "100000000"],
    ["gram", "--n-points", "1000000"],
    ["gram", "--reps", "100000000000000000000"],
    ["classify", "--m", "100000", "--dataset", "wine"],
]


@pytest.mark.slow  # every experiment, real processes
def test_oversized_runs_of_every_experiment_are_refused_before_allocating(tmp_path) -> None:
    out = ["--out", str(tmp_path / "x.parquet"), "--quiet", "--no-plot", "--workers", "1"]
    results = run_capped([[*args, *out] for args in OVERSIZED], tmp_path)
    for args, (code, lines) in zip(OVERSIZED, results, strict=True):
        assert code == 2 and len(lines) == 1, (args, lines)
        flag = args[1].lstrip("-").replace("-", "_")
        assert f"{flag!r} = {args[2]} is too large; at most" in lines[0], (args, lines[0])
        assert "ulimit -v" in lines[0], lines[0]  # the cap, not the machine, bounds the budget
    assert not (tmp_path / "x.parquet").exists()


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("cost", {"projection_budget": [512], "points": 256, "d": 32, "samples": 8, "repeats": 1,
                  "crossover_d": [16], "projection_d": [256], "projection_points": 2048,
                  "estimators": ["hyperbolic@iid", "angular-hybrid@iid", "sderf@iid"]}),
        ("precision", {"r": [1.0], "projection_budget": 256, "d": 128, "samples": 40, "angles": 5,
                       "attention_draws": 4, "attention_points": 64, "couplings": ["iid"],
                       "components": ["trig", "sderf", "angular-hybrid"]}),
        ("variance", {"regimes": ["normal"], "sigma": [0.1], "points": 512, "d": 256,
                      "set_pairs": 1, "mc_pairs": 8, "mc_samples": 200,
                      "mechanisms": ["trig", "positive", "sderf"]}),
        ("qmc", {"features": 1024, "m": 128, "n": 8, "reps": 20, "pairs": 50,
                 "datasets": ["wine"], "estimators": ["trig@orf", "angular-hybrid@orf"]}),
        ("clusters", {"datasets": ["s1"], "m": [400], "reps": 1, "protocol": ["rfbench"],
                      "estimators": ["trig@iid", "cluster-hybrid"]}),
        ("pointwise", {"estimators": ["trig@iid:1", "positive@iid:1"], "angles": 25, "d": 2,
                       "r": [1.0], "samples": 200_000, "paired": True}),
        ("theory", {"hrf_r_points": 200, "hrf_theta_points": 31, "density_w_points": 1500,
                    "ratio_v_points": 1500, "conformity_iid_couplings": 10}),
    ],
)  # fmt: skip
def test_estimates_bound_the_memory_jobs_allocate(name, config, data_dir) -> None:
    """The estimate is at least the traced peak (numpy reports its arrays to tracemalloc) of
    every job of a config sized so that its arrays, not the interpreter, dominate."""
    exp = get_experiment(name)
    resolved = exp.check_config(config)
    estimate = exp.peak_memory(resolved)
    for spec in expand_grid(exp, resolved):
        tracemalloc.start()
        try:
            with np.errstate(all="ignore"):
                exp.run_job(spec, np.random.default_rng(0))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak <= estimate, (spec, peak, estimate)


@pytest.fixture(autouse=True)
def _no_max_memory(monkeypatch) -> None:
    """No --max-memory left from a command line run earlier in this process."""
    monkeypatch.setattr(memlimits, "_requested", None)


def test_the_budget_is_the_tightest_limit(monkeypatch) -> None:
    monkeypatch.setattr(memlimits, "available_memory", lambda: 64 * 2**30)
    monkeypatch.setattr(memlimits, "address_space_headroom", lambda: None)
    monkeypatch.setattr(memlimits, "cgroup_headroom", lambda: None)
    assert memlimits.budget(2) == memlimits.Budget(16 * 2**30, memlimits.budget(2).source)
    monkeypatch.setattr(memlimits, "cgroup_headroom", lambda: 6 * 2**30)
    got = memlimits.budget(2)
    assert got.bytes == 3 * 2**30 and "cgroup" in got.source  # shared by the 2 workers
    monkeypatch.setattr(memlimits, "address_space_headroom", lambda: 2**30)
    got = memlimits.budget(2)
    assert got.bytes == 2**30 and "ulimit -v" in got.source  # per process: not divided
    got = memlimits.budget(1, max_memory=512 * 2**20)
    assert got.bytes == 512 * 2**20 and got.source == "--max-memory"
    assert memlimits.budget(1, max_memory=8 * 2**30).bytes == 2**30  # ulimit still applies


def test_a_cgroup_limit_refuses_a_run_that_fits_the_machine(monkeypatch) -> None:
    monkeypatch.setattr(memlimits, "available_memory", lambda: 2**40)
    monkeypatch.setattr(memlimits, "address_space_headroom", lambda: None)
    monkeypatch.setattr(memlimits, "cgroup_headroom", lambda: 2 * 2**30)
    exp = get_experiment("classify")
    config = exp.check_config({"m": [100000], "dataset": ["wine"]})
    with pytest.raises(ConfigError, match=r"cgroup memory limit / 1 worker.*'m' = 100000"):
        check_memory(exp, config, 1, None)


def _cgroup_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_cgroup_v2_and_v1_limits_are_read(tmp_path: Path) -> None:
    v2 = tmp_path / "v2"
    _cgroup_files(v2, {
        "proc": "0::/user/run\n",
        "user/run/memory.max": "max\n",
        "user/memory.max": f"{3 * 2**30}\n", "user/memory.current": f"{2**30}\n",
    })  # fmt: skip
    assert memlimits.cgroup_headroom(v2, v2 / "proc") == 2 * 2**30
    v1 = tmp_path / "v1"
    _cgroup_files(v1, {
        "proc": "4:memory:/box\n3:cpu:/other\n",
        "memory/box/memory.limit_in_bytes": f"{2**30}\n",
        "memory/box/memory.usage_in_bytes": f"{2**28}\n",
        "memory/memory.limit_in_bytes": "9223372036854771712\n",
    })  # fmt: skip
    assert memlimits.cgroup_headroom(v1, v1 / "proc") == 3 * 2**28
    none = tmp_path / "none"
    _cgroup_files(none, {"proc": "0::/\n", "memory.max": "max\n"})
    assert memlimits.cgroup_headroom(none, none / "proc") is None


def test_a_budget_no_size_fits_names_the_parameters_and_the_budget_needed() -> None:
    """Issue 39: ``--max-memory 1K`` said "reduce the problem size", naming no parameter; no size
    fits 1 KiB, so the message names the sizes tried and the budget the smallest job needs."""
    exp = get_experiment("pointwise")
    config = exp.resolve_config({}, "quick")
    with pytest.raises(ConfigError) as caught:
        check_memory(exp, config, 1, 1024)
    message = str(caught.value)
    assert "'d'" in message and "give --max-memory at least" in message
    assert "reduce the problem size" not in message
