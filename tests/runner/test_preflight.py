"""Every check that can refuse a run runs before its first job, names the real problem first, and
speaks the user's words: the profile ``default`` when none was given, the option the command has
(``--out``, or ``reproduce``'s ``--out-dir``). The README's order (``rfbench run`` a config, then
``rfbench reproduce --profile quick``) works, and ``--replace`` leaves no figure of the replaced
profile beside the new file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import one_line_error
from counted_experiment import Counted
from PIL import Image
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.results import load_provenance


def _configs(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.toml").write_text(f'experiment = "preflight-counted"\nname = "{name}"\n')
    return folder


def _invoke(*args: str):
    return CliRunner().invoke(app, [*args, "--backend", "serial", "--quiet"])


def test_the_readme_order_run_then_reproduce_quick_works(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    configs = _configs(tmp_path / "configs", "a", "b")
    done = _invoke("run", str(configs / "a.toml"), "--no-plot")
    assert done.exit_code == 0, done.output
    mine = tmp_path / "runs" / "preflight-counted" / "a.parquet"
    blob = mine.read_bytes()
    done = _invoke("reproduce", "--configs", str(configs), "--profile", "quick")
    assert done.exit_code == 0, done.output
    assert mine.read_bytes() == blob  # the everyday run's file is untouched
    for name in ("a", "b"):
        quick = tmp_path / "runs" / "quick" / "preflight-counted" / f"{name}.parquet"
        assert load_provenance(quick)["config"]["profile"] == "quick"


def test_a_clash_names_the_default_profile_and_the_commands_option(tmp_path: Path) -> None:
    out = tmp_path / "res" / "c.parquet"
    assert _invoke("preflight-counted", "--out", str(out), "--no-plot").exit_code == 0
    done = _invoke("preflight-counted", "--out", str(out), "--profile", "quick")
    line = one_line_error(done, "holds profile default results; this run is profile quick",
                          "--replace", f"--out {tmp_path / 'res' / 'c-quick.parquet'}")  # fmt: skip
    assert "None" not in line and "'quick'" not in line


def test_a_run_of_another_setting_is_refused_not_a_silent_replacement(tmp_path: Path) -> None:
    """Issue 39: ``attention --causal`` replaced the bidirectional result, ``--data`` replaced
    ``make run``'s: any resolved parameter that differs is a clash (naming it, ``--out`` and
    ``--replace``); the same command again replaces its own result."""
    out = tmp_path / "res" / "c.parquet"
    assert _invoke("preflight-counted", "--out", str(out), "--no-plot").exit_code == 0
    blob = out.read_bytes()
    assert _invoke("preflight-counted", "--out", str(out), "--no-plot").exit_code == 0
    done = _invoke("preflight-counted", "--out", str(out), "--reps", "2", "--no-plot")
    one_line_error(done, "holds results of reps 3; this run has reps 2", "--replace",
                   f"--out {tmp_path / 'res' / 'c-reps-2.parquet'}")  # fmt: skip
    assert load_provenance(out)["config"]["reps"] == 3 and out.read_bytes() != b""
    done = _invoke("preflight-counted", "--out", str(out), "--reps", "2", "--replace", "--no-plot")
    assert done.exit_code == 0 and load_provenance(out)["config"]["reps"] == 2
    assert blob


def test_reproduce_checks_every_config_before_the_first_job(tmp_path: Path) -> None:
    configs = _configs(tmp_path / "configs", "a", "b", "c")
    res = tmp_path / "res"
    _configs(tmp_path / "only", "b", "c")
    done = _invoke("reproduce", "--configs", str(tmp_path / "only"), "--out-dir", str(res),
                   "--profile", "paper")  # fmt: skip
    assert done.exit_code == 0, done.output
    Counted.jobs_run = 0
    done = _invoke("reproduce", "--configs", str(configs), "--out-dir", str(res))
    line = one_line_error(done, "holds profile paper results; this run is profile quick",
                          f"--out-dir {res / 'quick'}", "--replace",
                          "(1 more output likewise)")  # fmt: skip
    assert "--out " not in line
    assert Counted.jobs_run == 0 and not (res / "preflight-counted" / "a.parquet").exists()


def test_missing_data_is_named_before_an_output_clash(tmp_path: Path, monkeypatch) -> None:
    """Offline ``classify --dataset abalone`` over a quick run's file: the data is the problem."""
    out = tmp_path / "classify.parquet"
    quick = ["classify", "--dataset", "wine", "--profile", "quick", "--m", "1", "--trials", "2"]
    assert _invoke(*quick, "--out", str(out), "--no-plot").exit_code == 0
    empty = tmp_path / "no-data"
    empty.mkdir()
    monkeypatch.setenv("RFBENCH_DATA", str(empty))
    offline = lambda spec, base_url=None: ()  # noqa: E731
    monkeypatch.setattr("rfbench.compute.datasets.cache.urls", offline)
    done = _invoke("classify", "--dataset", "abalone", "--out", str(out), "--no-plot")
    one_line_error(done, "data set 'abalone'", "rfbench data fetch abalone")


def _drawn_by_rfbench(path: Path) -> None:
    Image.new("RGB", (4, 4)).save(path, pnginfo=_software("rfbench"))


def _software(name: str):
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Software", name)
    return info


@pytest.mark.parametrize("ours", [True, False])
def test_replace_removes_the_replaced_runs_figure_only_if_rfbench_drew_it(
    tmp_path: Path, ours: bool
) -> None:
    out = tmp_path / "res" / "c.parquet"
    assert _invoke("preflight-counted", "--out", str(out), "--no-plot").exit_code == 0
    figure = out.with_suffix(".png")
    Image.new("RGB", (4, 4)).save(figure, pnginfo=_software("rfbench" if ours else "my tool"))
    done = _invoke("preflight-counted", "--out", str(out), "--profile", "quick", "--replace",
                   "--no-plot")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert load_provenance(out)["config"]["profile"] == "quick"
    assert figure.exists() is not ours


def test_cache_info_looks_where_runs_go(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _invoke("preflight-counted", "--no-plot").exit_code == 0
    done = CliRunner().invoke(app, ["cache", "info"])
    assert done.exit_code == 0, done.output
    assert "runs/preflight-counted" in done.output.replace("\n", "").replace(" ", "")


def test_the_mixed_profile_warning_is_one_short_line_per_profile(tmp_path: Path, capsys) -> None:
    from rfbench.cli.present import NAMES_WIDTH, warn_mixed_profiles
    from rfbench.compute.runner import RunOptions, run

    res = tmp_path / "res"
    for profile in ("quick", "paper", None):
        for k in range(12):
            out = res / "preflight-counted" / f"{profile}-file-number-{k}.parquet"
            config = Counted().resolve_config({"reps": 1}, profile)
            run(Counted(), config, RunOptions(out=out, backend="serial", quiet=True))
    warn_mixed_profiles(res)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 4 and "mixes result files of 3 profiles" in lines[0]
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["default", "paper", "quick"]
    assert all("12 file(s)" in line and "more)" in line for line in lines[1:])
    assert max(map(len, lines[1:])) <= NAMES_WIDTH + 60


def test_a_clash_of_data_files_names_the_file_not_its_folders() -> None:
    from rfbench.compute.runner.outputs import _clash_message, differing

    old = {"profile": None, "name": "pointwise", "data": "", "r": [1.5], "causal": False}
    new = {**old, "data": "/home/me/pairs/my pairs.npz", "causal": True}
    assert differing(old, new) == ["data", "causal"]
    assert differing(old, {**old, "r": (1.5,)}) == []  # a tuple is the list the file stores
    assert differing({"name": "pointwise"}, new) == []  # a parameter added since: no clash
    edited = {**new, "data": "/home/me/pairs/my pairs.npz@0123456789abcdef"}
    assert differing({**new, "data": f"{new['data']}@fedcba9876543210"}, edited) == []
    out = Path("runs/pointwise/pointwise.parquet")
    line = _clash_message(out, "data", "", new["data"], "--out")
    assert "holds results of data none; this run has data my pairs.npz" in line
    assert "/home/me" not in line and "--out runs/pointwise/pointwise-data-my-pairs.parquet" in line


def test_a_rerun_served_from_the_cache_says_so(tmp_path: Path) -> None:
    """Issue 39: nothing said when a rerun's numbers came from the job cache."""
    out = tmp_path / "c.parquet"
    args = ["preflight-counted", "--out", str(out), "--backend", "serial", "--no-plot"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0 and "job cache" not in first.output
    again = CliRunner().invoke(app, args)
    assert "rfbench: 3 of 3 job(s) read from the job cache" in again.output
    assert "--force" in again.output
