"""``--data PATH`` / ``--target COLUMN`` on the command line: the user's own points through gram
and pointwise, a labelled table through classify; bad files exit 2 with one line and no output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.cli.errors import UserError
from rfbench.compute.datasets import user
from rfbench.compute.results import load_provenance, load_results

RUN = ("--backend", "serial", "--quiet")


def invoke(*args: str):
    return CliRunner().invoke(app, [*map(str, args), *RUN])


def ok(res) -> None:
    assert res.exit_code == 0, res.output


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    table = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=np.where(X[:, 0] > 0, "p", "n"))
    table.to_csv(tmp_path / "t.csv", index=False)
    np.savez(tmp_path / "qk.npz", Q=0.3 * rng.normal(size=(6, 5)), K=0.3 * rng.normal(size=(8, 5)))
    np.save(tmp_path / "x.npy", 0.3 * rng.normal(size=(8, 5)))
    return {p.name: p for p in tmp_path.iterdir()}


def gram_run(path: Path, out: Path):
    return invoke("gram", "--data", path, "--kernel", "softmax", "--m", "8", "--reps", "20",
                  "--estimator", "trig@iid", "--out", out)  # fmt: skip


def test_gram_on_queries_and_keys_records_the_pinned_file(files, tmp_path: Path) -> None:
    out = tmp_path / "g.parquet"
    ok(gram_run(files["qk.npz"], out))
    config = load_provenance(out)["config"]
    assert config["data"] == user.reference(files["qk.npz"]) and config["inputs"] == "file"
    assert config["data"].startswith(f"{files['qk.npz']}@")
    rows = load_results(out)
    assert set(rows["d"]) == {5} and set(rows["dataset"]) == {config["data"]}
    before = rows.set_index("metric").loc["frob_sq", "value"]
    # a changed file is a new reference: its jobs are computed again, not read from the cache
    np.savez(files["qk.npz"], Q=np.zeros((6, 5)), K=np.zeros((8, 5)))
    user.load_points.cache_clear()
    ok(gram_run(files["qk.npz"], out))
    again = load_provenance(out)["config"]["data"]
    assert again != config["data"] and again == user.reference(files["qk.npz"])
    assert load_results(out).set_index("metric").loc["frob_sq", "value"] != before


def test_pointwise_on_a_pair_file(files, tmp_path: Path) -> None:
    out = tmp_path / "p.parquet"
    ok(invoke("pointwise", "--data", files["x.npy"], "--estimator", "trig@iid",
              "--projection-budget", "16", "--samples", "50", "--pairs", "3",
              "--out", out))  # fmt: skip
    assert load_provenance(out)["config"]["data"] == user.reference(files["x.npy"])
    mse = load_results(out).query("metric == 'mse'")
    assert sorted(mse["pair_index"]) == [0, 1, 2]


def test_classify_on_a_csv_with_a_label_column(files, tmp_path: Path) -> None:
    out = tmp_path / "c.parquet"
    ok(invoke("classify", "--data", files["t.csv"], "--target", "label", "--m", "2",
              "--trials", "5", "--estimator", "positive@iid", "--out", out))  # fmt: skip
    ref = load_provenance(out)["config"]["data"]
    assert ref == user.reference(files["t.csv"], "label") and "#label@" in ref
    acc = load_results(out).query("metric == 'accuracy'")
    assert set(acc["dataset"]) == {ref} and set(acc["estimator"]) == {"positive@iid", "exact"}


@pytest.mark.parametrize(
    "name, content, command, needle",
    [
        ("flat.npy", np.ones(5), "gram", "shape (5,)"),
        ("nan.csv", "a,b\n1,2\n3,\n", "gram", "NaN or infinite"),
        ("text.csv", "a,b,label\n1,2,p\n3,x,n\n", "classify", "column 'b' is not numeric"),
        # a continuous or an id column as the target: accuracy 0, exit 0
        (
            "ids.csv",
            "a,b,label\n" + "".join(f"{i % 3},{i},{i / 7}\n" for i in range(30)),
            "classify",
            "each of its 30 rows",
        ),
        # one feature column: the default estimators' simplex couplings failed in the job (exit 1)
        (
            "one.csv",
            "a,label\n" + "".join(f"{i / 7},{i % 2}\n" for i in range(30)),
            "classify",
            "estimator 'positive@simrf': simplex couplings need d >= 2",
        ),
        ("fake.npy", "not an array", "gram", "not a NumPy .npy file"),
        ("fake.parquet", "\x00\x01garbage", "pointwise", "not a readable parquet file"),
        ("t.csv", None, "classify", "no column 'nope'"),
        ("missing.npz", None, "gram", "no such file"),
    ],
)
def test_bad_files_exit_2_with_one_line_and_no_output(
    files, tmp_path: Path, name: str, content, command: str, needle: str
) -> None:
    path = tmp_path / name
    if isinstance(content, np.ndarray):
        np.save(path, content)
    elif content is not None:
        path.write_text(content)
    target = ("--target", "nope" if name == "t.csv" else "label") if command == "classify" else ()
    out = tmp_path / "out.parquet"
    line = one_line_error(invoke(command, "--data", path, *target, "--out", out), needle)
    assert str(path) in line and not out.exists()


def test_misused_target_and_data_options(files, tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    one_line_error(invoke("classify", "--target", "label", "--out", out), "give --data")
    one_line_error(invoke("classify", "--data", files["t.csv"], "--out", out), "--target COLUMN")
    one_line_error(invoke("classify", "--data", files["t.csv"], "--target", "label",
                          "--dataset", "wine", "--out", out), "--datasets")  # fmt: skip
    one_line_error(invoke("gram", "--data", files["qk.npz"], "--inputs", "self", "--out", out),
                   "--inputs file")  # fmt: skip
    one_line_error(invoke("classify", "--data", files["qk.npz"], "--out", out), "needs a table")
    assert not out.exists()


@pytest.mark.parametrize("command", ["attention", "gram", "pointwise", "classify"])
def test_target_is_an_option_only_where_the_data_is_a_labelled_table(
    command, files, tmp_path: Path, capsys
) -> None:
    """``--target COLUMN (classify only)`` was listed in ``rfbench attention --help``."""
    from rfbench.cli.app import cli

    res = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "--data" in res.output
    assert ("--target" in res.output) == (command == "classify"), res.output
    assert "classify only" not in res.output
    if command != "classify":
        out = str(tmp_path / "out.parquet")
        assert cli([command, "--data", str(files["qk.npz"]), "--target", "a", "--out", out]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert "No such option: --target" in line


def test_the_experiment_says_what_its_data_file_is(files) -> None:
    """``--data`` asks the experiment's ``data_file`` (no list of experiment names in the CLI): a
    new experiment whose file is a labelled table gets ``--target``, its table replaces the
    parameter named, and the values the file needs are set."""
    from pydantic import Field

    from rfbench.cli import user_data
    from rfbench.compute.experiments import DataFile, Experiment
    from rfbench.compute.experiments.params import ExperimentParams, Values

    class TableParams(ExperimentParams):
        dataset: Values[str] = Field(["wine"], description="data sets")
        source: str = Field("builtin", description="where rows come from")
        reps: int = Field(100, ge=1, description="repetitions")
        data: str = Field("", description="a file")

    class Table(Experiment):
        name = "table-toy"
        params = TableParams
        data_file = DataFile(table_for="dataset", sets={"source": "file"}, defaults={"reps": 7})

    flags = [p.name for p in user_data.data_options(Table())]
    assert flags == ["user_data", "user_target"]
    got = user_data.apply(Table(), {}, user_data=str(files["t.csv"]), user_target="label")
    assert got["dataset"] == [] and got["source"] == "file" and got["reps"] == 7
    assert got["data"] == user.reference(files["t.csv"], "label")
    assert user_data.apply(Table(), {"reps": 3}, user_data=str(files["t.csv"]))["reps"] == 3
    with pytest.raises(UserError, match="--datasets"):
        user_data.apply(Table(), {"dataset": ["x"]}, user_data=str(files["t.csv"]))
    with pytest.raises(UserError, match="--source file"):
        user_data.apply(Table(), {"source": "builtin"}, user_data=str(files["t.csv"]))
    points = type("Points", (Table,), {"name": "points-toy", "data_file": DataFile()})
    assert [p.name for p in user_data.data_options(points())] == ["user_data"]
    with pytest.raises(UserError, match="every column"):
        user_data.apply(points(), {}, user_data=str(files["qk.npz"]), user_target="a")


def test_a_config_naming_a_file_without_its_sha_is_pinned_to_the_content(
    files, tmp_path: Path
) -> None:
    """``data = "t.csv#label"`` in a config (or --dataset t.csv#label) was keyed on the path
    alone: after the file changed, the job cache served the rows of its old content."""
    config = tmp_path / "mine.toml"
    config.write_text(f'experiment = "classify"\nname = "mine"\n[params]\n'
                      f'data = "{files["t.csv"]}#label"\nm = [2]\ntrials = 3\n'
                      'estimators = ["positive@iid"]\n')  # fmt: skip
    out = tmp_path / "c.parquet"
    for labels in ("pn", "np"):
        table = pd.read_csv(files["t.csv"])
        table["label"] = np.where(table["a"] > 0, *labels)
        table.to_csv(files["t.csv"], index=False)
        ok(invoke("run", config, "--out", out))
        want = user.reference(files["t.csv"], "label")
        assert load_provenance(out)["config"]["data"] == want
        assert set(load_results(out)["dataset"]) == {want}
        ok(invoke("classify", "--dataset", f"{files['t.csv']}#label", "--m", "2", "--trials",
                  "3", "--estimator", "positive@iid", "--out", tmp_path / "d.parquet",
                  "--replace"))  # fmt: skip
        assert load_provenance(tmp_path / "d.parquet")["config"]["dataset"] == [want]


def test_data_takes_the_reference_form_of_configs_and_provenance(files, tmp_path: Path) -> None:
    """``--data t.csv#label`` (a config's form) said 'no such file'; a reference copied from a
    result's provenance reruns on the same content, and a file whose path holds a '#' is told
    apart instead of 'unsupported type'."""
    out = tmp_path / "c.parquet"
    run = ("--m", "2", "--trials", "3", "--estimator", "positive@iid", "--out", out)
    ok(invoke("classify", "--data", f"{files['t.csv']}#label", *run))
    ref = load_provenance(out)["config"]["data"]
    assert ref == user.reference(files["t.csv"], "label")
    ok(invoke("classify", "--data", ref, *run))
    assert load_provenance(out)["config"]["data"] == ref
    one_line_error(invoke("classify", "--data", f"{files['t.csv']}#label", "--target", "b", *run),
                   "names the column 'label', --target 'b': give one")  # fmt: skip
    one_line_error(invoke("classify", "--data", f"{files['t.csv']}#label@0123456789abcdef",
                          *run), "is not the 0123456789abcdef")  # fmt: skip
    odd = tmp_path / "a#b"
    odd.mkdir()
    (odd / "t.csv").write_bytes(files["t.csv"].read_bytes())
    one_line_error(invoke("classify", "--data", odd / "t.csv", "--target", "label", *run),
                   "a '#' in its path reads as PATH#TARGET")  # fmt: skip


def test_a_table_named_by_its_path_elsewhere_in_a_config_is_pinned_alike(
    files, tmp_path: Path
) -> None:
    """trials_by_dataset's key and subset_datasets' entry name the table as dataset does; pinned
    only there, they no longer matched ('names of the run's data sets')."""
    table = f"{files['t.csv']}#label"
    config = tmp_path / "mine.toml"
    config.write_text(f'experiment = "classify"\nname = "mine"\n[params]\n'
                      f'dataset = ["wine", "{table}"]\nm = [2]\ntrials = 3\n'
                      f'estimators = ["positive@iid"]\ntrials_by_dataset = {{"{table}" = 4}}\n'
                      f'subset_datasets = ["{table}"]\n')  # fmt: skip
    out = tmp_path / "c.parquet"
    ok(invoke("run", config, "--out", out))
    ref = user.reference(files["t.csv"], "label")
    config = load_provenance(out)["config"]
    assert config["trials_by_dataset"] == {ref: 4} and config["subset_datasets"] == [ref]
    rows = load_results(out).query("metric == 'accuracy' and estimator == 'positive@iid'")
    assert dict(zip(rows["dataset"], rows["n_trials"], strict=True)) == {"wine": 3, ref: 4}
