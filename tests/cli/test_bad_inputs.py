"""User errors are user errors: each bad input below exits 2 with one line (no warning, no
traceback) and writes no result.

The inputs a reliability probe reported as 'internal error' or as a silent wrong answer: duplicates,
values float64 cannot carry (probed per estimator before any job, rfbench.compute.runner.ranges),
user files that are not plain real numbers, an unreachable scheduler, a full disk.
"""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rfbench.cli.app import app

BAD = [
    (["pointwise", "--projection-budgets", "64,64"], "'projection_budget': 64 is listed twice"),
    (["pointwise", "--r", "1,1"], "'r': 1.0 is listed twice"),
    (["pointwise", "--estimators", "trig@iid,trig@iid"], "'trig@iid' is listed twice"),
    (["classify", "--dataset", "wine,wine"], "'wine' is listed twice"),
    (["gram", "--sigma", "inf"], "'sigma': inf (allowed: a finite number)"),
    (["classify", "--sigma", "inf"], "'sigma': inf (allowed: a finite number)"),
    (["gram", "--sigma", "nan"], "'sigma': nan (allowed: a finite number)"),
    (["classify", "--trials-by-dataset", "wine=5,wine=6"], "'wine' is given twice"),
    (["classify", "--trials-by-dataset", "wine"], "(expected name=value,...)"),
    (["classify", "--trials-by-dataset", "wnie=5", "--dataset", "wine"], "not 'wnie'"),
    (["pointwise", "--r", "30"], "'r': 30 is out of float64 range for trig@iid"),
    (["pointwise", "--r", "8"], "the largest value that runs is about"),
    (["pointwise", "--r", "1e308"], "a number whose square float64 holds"),
    (["gram", "--sigma", "100"], "'sigma': 100 is out of float64 range"),
    (["gram", "--estimators", "sign@iid", "--kernels", "gaussian"], "every gram row was skipped"),
    (["pointwise", "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9"], "cannot reach"),
    # the samples × angles estimates a job keeps were not in its memory estimate: MemoryError
    (["pointwise", "--samples", "1000000000000"], "'samples' = 1000000000000 is too large"),
    (["pointwise", "--angles", "1000000000000"], "'angles' = 1000000000000 is too large"),
    (["classify", "--dataset", "wine", "--val-trials", str(10**12)], "'val_trials' = 10000"),
]
#: inputs whose refusal waits for a timeout (an unreachable scheduler: 5 s)
SLOW_INPUTS = {"--scheduler"}


def _files(folder: Path) -> dict[str, Path]:
    """User files that are not plain real numbers."""
    np.save(folder / "fifty.npy", np.array([[50.0]]))
    np.savez(folder / "objects.npz", X=np.array([{"a": 1}], dtype=object))
    np.save(folder / "complex.npy", np.ones((5, 2)) + 1j)
    (folder / "text.npz").write_text("x,y\n1,2\n")
    rows = "\n".join(f"{i},{1e300 if i == 3 else i},{i % 2}" for i in range(8))
    (folder / "big.csv").write_text("a,b,label\n" + rows + "\n")
    return {p.name: p for p in folder.iterdir()}


FILES = [
    (["gram", "--data", "fifty.npy"], "the inputs are out of float64 range"),
    (["gram", "--data", "objects.npz"], "rfbench never loads pickles"),
    (["gram", "--data", "complex.npy"], "X is complex"),
    (["gram", "--data", "text.npz"], "not a NumPy .npz file (not a zip archive)"),
    (["classify", "--data", "big.csv", "--target", "label"], "at line 5, column 'b'"),
    (["gram", "--data", "."], "is a folder"),
]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(a, m, id=" ".join(a), marks=[pytest.mark.slow] * bool(SLOW_INPUTS & set(a)))
        for a, m in BAD
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args, message) -> None:
    out = tmp_path / "x.parquet"
    done = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet"])
    assert done.exit_code == 2, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rfbench: error:") and message in lines[0]
    assert not out.exists()


@pytest.mark.parametrize(("args", "message"), FILES, ids=[" ".join(a) for a, _ in FILES])
def test_bad_user_files_are_one_line_and_exit_2(tmp_path: Path, args, message) -> None:
    data = tmp_path / "data"
    data.mkdir()
    files = _files(data)
    args = [str(files.get(a, data)) if a in files or a == "." else a for a in args]
    test_bad_input_is_one_line_and_exit_2(tmp_path, args, message)


def test_a_full_disk_is_a_user_error(tmp_path: Path, monkeypatch) -> None:
    import rfbench.compute.results

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x.parquet"))

    monkeypatch.setattr(rfbench.compute.results.os, "replace", full)
    test_bad_input_is_one_line_and_exit_2(
        tmp_path, ["pointwise", "--profile", "quick"], "No space left on device"
    )


def test_a_far_option_gets_no_suggestion(capsys) -> None:
    from rfbench.cli.app import cli

    assert cli(["pointwise", "--nosuch", "1"]) == 2
    err = capsys.readouterr().err
    assert "No such option: --nosuch" in err and "--out" not in err
    assert cli(["pointwise", "--sampels", "1"]) == 2
    assert "Possible options: --samples" in capsys.readouterr().err


def test_lists_whose_default_repeats_a_value_may_repeat() -> None:
    from rfbench.compute.experiments import get_experiment

    classify = get_experiment("classify")
    assert classify.parameters()["subset"].default == [
        0,
        0,
    ]  # (train, test) sizes, not a set of values
    assert classify.check_config({"subset": [0, 0]})["subset"] == [0, 0]


def test_config_paths_that_are_not_what_the_command_takes(tmp_path: Path, monkeypatch) -> None:
    """``run FOLDER`` said the folder did not exist; ``reproduce --configs`` naming a missing
    folder, a file or an empty folder said no configs were found in ./configs."""
    from cli_helpers import one_line_error

    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "one.toml").write_text('experiment = "theory"\n')
    run = CliRunner().invoke(app, ["run", "empty"])
    one_line_error(run, "config file empty is a directory, not a TOML file")
    for folder, message in [
        ("nothere", "config folder 'nothere' does not exist"),
        ("one.toml", "--configs 'one.toml' is a file; give a folder of configs (one config runs "
                     "with: rfbench run one.toml)"),
        ("empty", "no config files found (looked for empty/**/*.toml)"),
    ]:  # fmt: skip
        done = CliRunner().invoke(app, ["reproduce", "--configs", folder, "--quiet"])
        one_line_error(done, message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "one.toml"]


@pytest.mark.parametrize(
    ("option", "message"),
    [(["--seed", "-1"], "'seed': -1"), (["--workers", "0"], "'workers': 0")],
)
def test_reproduce_refuses_bad_run_options_before_checking_configs(
    tmp_path: Path, option, message
) -> None:
    """They were refused after every config had been checked (a paper profile's range probes
    take minutes); here the broken config would be found first."""
    from cli_helpers import one_line_error

    (tmp_path / "bad.toml").write_text('experiment = "theory"\n[params]\nbogus = 1\n')
    done = CliRunner().invoke(app, ["reproduce", "--configs", str(tmp_path), *option])
    one_line_error(done, f"invalid value for {message}")


def test_a_users_table_among_the_data_sets_is_sized_before_allocating(tmp_path: Path) -> None:
    """--dataset t.csv#label was given no memory estimate (only --data was): a huge m ran into a
    MemoryError (exit 1)."""
    rows = "\n".join(f"{i},{i % 5},{i % 2}" for i in range(40))
    (tmp_path / "t.csv").write_text("a,b,label\n" + rows + "\n")
    args = ["classify", "--dataset", f"{tmp_path / 't.csv'}#label", "--m", "100000000"]
    test_bad_input_is_one_line_and_exit_2(tmp_path, args, "'m' = 100000000 is too large")
