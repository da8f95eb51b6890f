"""The experiment runner (docs/architecture.md#flow, #cli, #result-schema, #seeding) on a toy Monte
Carlo experiment.

The toy job draws ``samples`` standard normals shifted by ``mu`` from its generator and reports
their mean. Every claim of the runner is checked: jobs draw from
``job_rng(seed, {"experiment": name, **spec})``; the output is bit-identical across backends,
worker counts and job orders; a run that crashes or is interrupted resumes from its cache to the
same rows; the cache is keyed by seed and config.
"""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

import rfbench.compute.experiments as experiments
from rfbench.compute.experiments import (
    ConfigError,
    Experiment,
    JobSpec,
    UnknownExperimentError,
    get_experiment,
    list_experiments,
    register_experiment,
)
from rfbench.compute.experiments.params import ExperimentParams, Values
from rfbench.compute.results import load_provenance, load_results
from rfbench.compute.runner import JobCache, JobFailed, RunOptions, cache_dir, load_config, run
from rfbench.compute.runner.progress import JobProgress
from rfbench.compute.seeding import job_rng

FAILING = JobSpec(mu=1.5, samples=32, rep=1)  # the job the flag file makes fail


class ToyParams(ExperimentParams):
    mu: Values[float] = [0.0, 1.5]
    samples: int = 32
    reps: int = 3
    label: str = "x"


@register_experiment
class Toy(Experiment):
    name = "toy-mc"
    description = "Monte Carlo mean of N(mu, 1)"
    params = ToyParams
    profiles = {"quick": {"samples": 8, "reps": 2}, "paper": {}}

    def __init__(self, flag: Path | None = None, stop: type[BaseException] = RuntimeError) -> None:
        self.flag, self.stop = flag, stop
        self.calls: list[JobSpec] = []  # filled in serial runs only (workers get copies)

    def validate_config(self, config):
        if config["samples"] < 2:
            raise ConfigError.bad_value("samples", config["samples"], "integers >= 2")

    def grid(self, config):
        return [
            JobSpec(mu=mu, samples=config["samples"], rep=k)
            for mu in config["mu"]
            for k in range(config["reps"])
        ]

    def run_job(self, spec, rng):
        self.calls.append(spec)
        if self.flag is not None and self.flag.exists() and spec == FAILING:
            raise self.stop("simulated crash")
        if spec == JobSpec(mu=0.0, samples=32, rep=0):
            time.sleep(0.15)  # the first job finishes last on two workers
        x = spec["mu"] + rng.standard_normal(spec["samples"])
        common = {"estimator": "toy@iid", "kernel": "softmax", "r": spec["mu"], "rep": spec.rep}
        n = x.size
        return [
            {**common, "metric": "mean", "value": x.mean(), "stderr": x.std(ddof=1) / np.sqrt(n),
             "n_trials": n},
            {**common, "metric": "true", "value": spec["mu"], "stderr": None, "n_trials": 0},
        ]  # fmt: skip


class CostedToy(Toy):
    def job_cost(self, spec):
        return spec["mu"] + spec.rep / 10  # the last job of the grid is the longest


class ReversedToy(Toy):
    def grid(self, config):
        return super().grid(config)[::-1]


class SpecOnlyToy(Toy):
    def cache_context(self, config):
        return {}  # run_job reads only its spec: a grown grid reuses finished jobs


class MeanOverReps(Toy):
    def finalize(self, rows, config):
        means = rows[rows["metric"] == "mean"]
        out = means.groupby("r", sort=False).agg(
            value=("value", "mean"),
            stderr=("value", "std"),
            n_trials=("n_trials", "sum"),
            k=("rep", "size"),
        )
        out["stderr"] /= np.sqrt(out.pop("k"))
        return out.reset_index().assign(estimator="toy@iid", kernel="softmax", metric="mean")


def _run(exp: Experiment, out: Path, **kw) -> pd.DataFrame:
    kw.setdefault("backend", "serial")
    path = run(
        exp, kw.pop("config", None), RunOptions(out=out, quiet=True, command_line="test", **kw)
    )
    assert path == out
    return load_results(out)


def _leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> pd.DataFrame:
    """An uninterrupted serial run with seed 0 and the default config."""
    return _run(Toy(), tmp_path_factory.mktemp("ref") / "toy.parquet")


def test_rows_follow_the_seeding_contract(reference) -> None:
    means = reference[reference["metric"] == "mean"]
    assert len(means) == 6 and list(means["rep"]) == [0, 1, 2, 0, 1, 2]  # grid order
    assert (reference["experiment"] == "toy-mc").all() and (reference["figure"] == "").all()
    for row in means.itertuples():
        spec = JobSpec(mu=row.r, samples=32, rep=row.rep)
        x = row.r + job_rng(0, {"experiment": "toy-mc", **spec}).standard_normal(32)
        assert row.value == x.mean()  # bit-identical to the documented job generator
    assert means["value"].nunique() == 6  # independent streams per job
    # the toy is a real estimator: each mean lies within 5 standard errors (1/√32) of mu
    assert (np.abs(means["value"] - means["r"]) < 5 / np.sqrt(32)).all()


def test_bit_identical_across_backends_workers_and_order(tmp_path, reference) -> None:
    for workers in (1, 2):
        got = _run(Toy(), tmp_path / f"p{workers}.parquet", backend="processes", workers=workers)
        pd.testing.assert_frame_equal(got, reference, check_exact=True)
    rev = _run(ReversedToy(), tmp_path / "rev.parquet")
    assert list(rev["rep"][::2]) == [2, 1, 0, 2, 1, 0]  # rows follow the grid, values the keys
    key = ["r", "rep", "metric"]
    pd.testing.assert_frame_equal(
        rev.sort_values(key, ignore_index=True),
        reference.sort_values(key, ignore_index=True),
        check_exact=True,
    )


def test_jobs_start_longest_first_and_the_rows_stay_in_grid_order(tmp_path, reference) -> None:
    exp = CostedToy()
    got = _run(exp, tmp_path / "toy.parquet")
    grid = Toy().grid(Toy().check_config({}))
    assert exp.calls == grid[::-1]  # decreasing cost
    pd.testing.assert_frame_equal(got, reference, check_exact=True)
    pd.testing.assert_frame_equal(
        _run(CostedToy(), tmp_path / "p.parquet", backend="processes", workers=2),
        reference,
        check_exact=True,
    )


def test_provenance_of_a_run(tmp_path) -> None:
    out = tmp_path / "toy.parquet"
    run(
        Toy(),
        {"reps": 1, "figure": "toy-fig1"},
        RunOptions(
            seed=5,
            out=out,
            quiet=True,
            backend="serial",
            command_line=["rfbench", "run", "toy.toml"],
        ),
    )
    prov = load_provenance(out)
    assert prov["seed"] == 5 and prov["command_line"] == "rfbench run toy.toml"
    assert prov["config"] == {
        "experiment": "toy-mc", "name": "toy-mc", "figure": "toy-fig1", "profile": None,
        "mu": [0.0, 1.5], "samples": 32, "reps": 1, "label": "x",
    }  # fmt: skip
    assert prov["experiment"] == "toy-mc" and prov["n_jobs"] == 2 and prov["backend"] == "serial"
    assert prov["workers"] == 1  # a serial run, whatever the machine's cores
    assert (load_results(out)["figure"] == "toy-fig1").all()


@pytest.mark.parametrize("backend", ["serial", "processes"])
def test_timings_in_provenance_leave_rows_and_cache_keys_alone(tmp_path, reference, backend):
    out = tmp_path / "toy.parquet"
    rows = _run(Toy(), out, backend=backend, workers=2)
    pd.testing.assert_frame_equal(rows, reference, check_exact=True)  # rows unchanged
    timing = load_provenance(out)["timing"]
    assert timing["jobs_computed"] == 6 and timing["jobs_cached"] == 0
    assert len(timing["job_wall_s"]) == len(timing["job_cpu_s"]) == 6
    assert all(t >= 0 for t in timing["job_wall_s"] + timing["job_cpu_s"])
    assert timing["job_wall_s"][0] >= 0.1  # the first toy job sleeps 0.15 s
    assert timing["wall_s"] >= timing["job_wall_s"][0] and timing["cpu_s"] >= 0
    assert timing["jobs_wall_s"] == pytest.approx(sum(timing["job_wall_s"]), rel=1e-3)
    machine = load_provenance(out)["machine"]
    assert machine["cores"] >= 1 and isinstance(machine["blas"], list)
    # a rerun hits the cache (same keys) and keeps the times measured when the jobs ran
    files = sorted(p.name for p in cache_dir(out).rglob("*.parquet"))
    again = _run(Toy(), tmp_path / "again.parquet")
    pd.testing.assert_frame_equal(again, reference, check_exact=True)
    assert sorted(p.name for p in cache_dir(out).rglob("*.parquet")) == files
    cached = load_provenance(tmp_path / "again.parquet")["timing"]
    assert cached["jobs_computed"] == 0 and all(cached["job_cached"])
    assert cached["job_wall_s"] == timing["job_wall_s"]


def test_finalize_aggregates_over_repetitions(tmp_path, reference) -> None:
    got = _run(MeanOverReps(), tmp_path / "agg.parquet", config={"reps": 4})
    assert list(got["r"]) == [0.0, 1.5] and list(got["n_trials"]) == [128, 128]
    assert (np.abs(got["value"] - got["r"]) < 5 / np.sqrt(128)).all()
    assert (got["stderr"] > 0).all()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["serial", "processes"])
def test_resume_after_a_crash(tmp_path, reference, backend) -> None:
    flag = tmp_path / "fail"
    flag.touch()
    out = tmp_path / "toy.parquet"
    with pytest.raises(JobFailed, match="simulated crash") as info:
        run(Toy(flag), None, RunOptions(out=out, quiet=True, backend=backend, workers=2))
    assert info.value.spec == FAILING
    assert not out.exists() and not _leftovers(tmp_path)
    cached = sorted(cache_dir(out).rglob("*.parquet"))
    assert 1 <= len(cached) <= 5  # the finished jobs, not the crashed one
    assert not JobCache(cache_dir(out), Toy(), 0, Toy().check_config({})).path(FAILING).exists()

    flag.unlink()
    again = Toy()
    got = _run(again, out, backend=backend, workers=2)
    pd.testing.assert_frame_equal(got, reference, check_exact=True)
    if backend == "serial":  # only the jobs missing from the cache ran
        assert FAILING in again.calls and len(again.calls) == 6 - len(cached)


def test_interrupt_leaves_cache_and_no_output(tmp_path, reference) -> None:
    flag = tmp_path / "stop"
    flag.touch()
    out = tmp_path / "toy.parquet"
    first = Toy(flag, stop=KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        run(first, None, RunOptions(out=out, quiet=True, backend="serial"))
    assert len(first.calls) == 5  # FAILING is the 5th job
    assert not out.exists() and not _leftovers(tmp_path)
    assert len(list(cache_dir(out).rglob("*.parquet"))) == 4
    flag.unlink()
    again = Toy()
    pd.testing.assert_frame_equal(_run(again, out), reference, check_exact=True)
    assert again.calls == Toy().grid(Toy().check_config({}))[4:]


def test_force_ignores_the_cache(tmp_path, reference) -> None:
    out = tmp_path / "toy.parquet"
    _run(Toy(), out)
    config = Toy().check_config({})
    cache = JobCache(cache_dir(out), Toy(), 0, config)
    spec = Toy().grid(config)[0]
    tampered = cache.load(spec)
    tampered["value"] += 100.0
    cache.store(spec, tampered)
    reused = _run(Toy(), out)
    assert reused["value"].iloc[0] == reference["value"].iloc[0] + 100.0  # the cache was read
    forced = Toy()
    pd.testing.assert_frame_equal(_run(forced, out, force=True), reference, check_exact=True)
    assert len(forced.calls) == 6


def test_force_computes_a_shared_job_once_per_reproduction(tmp_path, reference) -> None:
    """``fresh`` (what ``rfbench reproduce`` passes from config to config): a forced run reuses
    the jobs an earlier run of the same reproduction computed, and nothing older."""
    out = tmp_path / "a.parquet"
    _run(Toy(), out)  # from before: never reused by a forced run
    fresh: set[Path] = set()
    first, second = Toy(), Toy()
    _run(first, out, force=True, fresh=fresh)
    got = _run(second, tmp_path / "b.parquet", force=True, fresh=fresh)
    assert len(first.calls) == 6 and second.calls == [] and len(fresh) == 6
    pd.testing.assert_frame_equal(got, reference, check_exact=True)


@pytest.mark.slow
def test_stale_cache_is_not_reused(tmp_path, reference) -> None:
    out = tmp_path / "toy.parquet"
    _run(Toy(), out)
    fresh = _run(Toy(), tmp_path / "other" / "fresh.parquet", seed=1)  # its own folder and cache
    changes = [
        ({"seed": 1}, False),
        ({"config": {"samples": 16}}, False),
        ({"config": {"label": "y"}}, True),
    ]
    for change, same_values in changes:
        exp = Toy()
        got = _run(exp, out, replace=True, **change)  # another config: --replace
        assert len(exp.calls) == 6, change  # every job recomputed
        assert np.array_equal(got["value"], reference["value"]) == same_values, change
    pd.testing.assert_frame_equal(_run(Toy(), out, seed=1, replace=True), fresh, check_exact=True)


def test_outputs_of_one_folder_share_their_jobs(tmp_path, reference) -> None:
    _run(Toy(), tmp_path / "a.parquet")
    again = Toy()
    got = _run(again, tmp_path / "b.parquet")  # same jobs under another name: all cached
    assert again.calls == [] and np.array_equal(got["value"], reference["value"])


def test_spec_only_cache_reuses_jobs_of_a_grown_grid(tmp_path) -> None:
    out = tmp_path / "toy.parquet"
    first = SpecOnlyToy()
    _run(first, out, config={"reps": 2})
    grown = SpecOnlyToy()
    got = _run(grown, out, config={"reps": 3}, replace=True)  # another config: --replace
    assert len(first.calls) == 4 and sorted(s.rep for s in grown.calls) == [2, 2]
    pd.testing.assert_frame_equal(got, _run(Toy(), tmp_path / "ref.parquet"), check_exact=True)


def test_bad_jobs_and_grids(tmp_path) -> None:
    class Duplicated(Toy):
        def grid(self, config):
            return [JobSpec(mu=1.0, samples=32), JobSpec(mu=1, samples=32)]  # 1.0 == 1

    class BadRows(Toy):
        def run_job(self, spec, rng):
            return [{"estimator": "t", "kernel": "softmax", "metric": "avg", "value": 1.0,
                     "stderr": None, "n_trials": 1}]  # fmt: skip

    with pytest.raises(ValueError, match="repeats job"):
        run(
            Duplicated(), None, RunOptions(out=tmp_path / "a.parquet", quiet=True, backend="serial")
        )
    with pytest.raises(JobFailed, match="unknown metric"):  # checked in the job, not at the end
        run(BadRows(), None, RunOptions(out=tmp_path / "b.parquet", quiet=True, backend="serial"))
    assert not list(tmp_path.glob("*.parquet"))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"seed": -1}, "invalid value for 'seed': -1"),
        ({"workers": 0}, "invalid value for 'workers': 0"),
        ({"backend": "threads"}, "(allowed: serial, processes, dask)"),
        ({"scheduler": "tcp://x:8786"}, "applies only to --backend dask"),
        ({"out": "toy.csv"}, "ending in .parquet"),
        ({"config": {"samples": 1}}, "invalid value for 'samples': 1 (allowed: integers >= 2)"),
        ({"config": {"sample": 10}}, "unknown parameter(s) 'sample' for experiment 'toy-mc'"),
        ({"config": {"samples": "10"}}, "invalid value for 'samples': '10' (allowed: an integer)"),
    ],
)
def test_bad_options(tmp_path, options, message) -> None:
    options.setdefault("out", tmp_path / "toy.parquet")
    options["out"] = tmp_path / options["out"]
    with pytest.raises(ConfigError) as info:
        run(Toy(), options.pop("config", None), RunOptions(quiet=True, **options))
    assert message in str(info.value)
    assert not list(tmp_path.iterdir())


def test_dask_backend_is_optional(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if not installed
    with pytest.raises(ConfigError, match=r"pip install 'rfbench\[dask\]'"):
        run(
            Toy(),
            None,
            RunOptions(out=tmp_path / "t.parquet", quiet=True, backend="dask", workers=1),
        )


def test_jobspec() -> None:
    spec = JobSpec({"estimator": "trig@iid", "r": [0.5, 1]}, m=np.int64(8), rep=2)
    assert dict(spec) == {"estimator": "trig@iid", "m": 8, "r": (0.5, 1), "rep": 2}
    assert (
        spec.rep == 2
        and JobSpec(r=1.0) == JobSpec(r=1)
        and hash(JobSpec(r=1.0)) == hash(JobSpec(r=1))
    )
    assert spec.to_json() == '{"estimator":"trig@iid","m":8,"r":[0.5,1],"rep":2}'
    assert spec.replace(rep=3)["rep"] == 3 and spec["rep"] == 2
    with pytest.raises(AttributeError):
        spec.x = 1  # type: ignore[attr-defined]
    for bad in ({"opts": {"a": 1}}, {"experiment": "x"}, {"rep": -1}, {"rep": 1.5}):
        with pytest.raises(TypeError):
            JobSpec(bad)
    import pickle

    assert pickle.loads(pickle.dumps(spec)) == spec


def test_resolve_config_precedence_and_types() -> None:
    exp = Toy()
    assert exp.resolve_config()["samples"] == 32
    quick = exp.resolve_config({"reps": 5}, "quick")
    assert (quick["samples"], quick["reps"], quick["profile"]) == (8, 5, "quick")
    cfg = exp.resolve_config({"mu": 2}, name="n1", figure="f")
    assert cfg["mu"] == [2.0] and isinstance(cfg["mu"][0], float)  # scalar -> list, int -> float
    assert (cfg["name"], cfg["figure"], cfg["experiment"]) == ("n1", "f", "toy-mc")
    assert exp.check_config(cfg) == cfg  # idempotent
    with pytest.raises(ConfigError, match="'profile': 'fast' \\(allowed: quick, paper\\)"):
        exp.resolve_config(profile="fast")
    with pytest.raises(ConfigError, match="not 'toy-mc'"):
        exp.check_config({"experiment": "gram"})


def test_registry(monkeypatch) -> None:
    monkeypatch.setattr(experiments._load, "loaded", True)  # no discovery of other modules here
    assert isinstance(get_experiment("toy-mc"), Toy)
    assert "toy-mc" in [e.name for e in list_experiments()]
    with pytest.raises(
        UnknownExperimentError, match="unknown experiment 'nope' \\(allowed: .*toy-mc"
    ):
        get_experiment("nope")

    class Clash(Experiment):
        name = "toy-mc"

    with pytest.raises(ValueError, match="already registered"):
        register_experiment(Clash)


CONFIG = """
experiment = "toy-mc"
figure = "toy-fig1"
[params]
mu = [0.5]
samples = 64
[profiles.quick]
samples = 4
"""


def test_load_config(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(experiments._load, "loaded", True)
    path = tmp_path / "fig1.toml"
    path.write_text(CONFIG)
    cfg = load_config(path)
    assert (cfg["name"], cfg["figure"], cfg["mu"], cfg["samples"], cfg["reps"]) == (
        "fig1", "toy-fig1", [0.5], 64, 3,
    )  # fmt: skip
    quick = load_config(path, "quick")
    assert (quick["samples"], quick["reps"], quick["profile"]) == (4, 2, "quick")
    assert load_config(path, "paper", overrides={"reps": 1})["reps"] == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "does not exist"),
        ("experiment = 'toy-mc'\n[params\n", "invalid TOML"),
        ("experiment = 'toy-mc'\nsamples = 3\n", "unknown top-level key(s) 'samples'"),
        ("name = 'x'\n", "missing required key 'experiment'"),
        ("experiment = 3\n", "key 'experiment' must be a non-empty string"),
        ("experiment = 'nope'\n", "unknown experiment 'nope'"),
        ("experiment = 'toy-mc'\nparams = 3\n", "[params] must be a table"),
        ("experiment = 'toy-mc'\n[params]\nsampels = 3\n", "unknown parameter(s) 'sampels'"),
        (
            "experiment = 'toy-mc'\n[params]\nsamples = 'x'\n",
            "'samples': 'x' (allowed: an integer)",
        ),
        ("experiment = 'toy-mc'\n[params]\nsamples = 1\n", "'samples': 1 (allowed: integers >= 2)"),
        ("experiment = 'toy-mc'\n[params]\nname = 'x'\n", "'name' belongs at the top level"),
        (
            "experiment = 'toy-mc'\n[profiles.fast]\nsamples = 2\n",
            "unknown profile [profiles.fast]",
        ),
        # a profile other than the run's: its typo was found only when that profile ran
        (
            "experiment = 'toy-mc'\n[profiles.paper]\nsampels = 2\n",
            "[profiles.paper]: unknown parameter(s) 'sampels'",
        ),
        (
            "experiment = 'toy-mc'\n[profiles.paper]\nsamples = 'x'\n",
            "[profiles.paper]: invalid value for 'samples': 'x' (allowed: an integer)",
        ),
    ],
)
def test_malformed_config(tmp_path, monkeypatch, text, message) -> None:
    monkeypatch.setattr(experiments._load, "loaded", True)
    path = tmp_path / "bad.toml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert message in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value).strip()  # one line on stderr


def test_progress_bar() -> None:
    def render(delay: float, enabled: bool = True, work: float = 0.0) -> str:
        buf = io.StringIO()
        console = Console(file=buf, width=100, force_terminal=False)
        with JobProgress(3, 1, enabled=enabled, delay=delay, console=console) as bar:
            time.sleep(work)
            bar.advance(2)
        return buf.getvalue()

    assert "3/3" in render(0.0, work=0.1) and "elapsed" in render(0.0, work=0.1)
    assert render(5.0) == ""  # a short run shows nothing
    assert render(0.0, enabled=False, work=0.1) == ""  # quiet
