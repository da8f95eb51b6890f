"""``rfbench compare`` reads damaged or hostile files with exit status 2 and one line naming the
file and the problem, and compares files whose columns collide with its own (issue 32.2)."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from compare_helpers import one_line, rows, write

import rfbench.present.compare.compare
from rfbench.cli.app import cli
from rfbench.compute.checks import UserError
from rfbench.compute.results import METADATA_KEY, make_provenance
from rfbench.present.compare.compare import compare
from rfbench.present.compare.output import row_table


def _both(tmp_path, table: pd.DataFrame) -> tuple[str, str]:
    write(tmp_path / "a", table)
    write(tmp_path / "b", table.assign(value=table["value"] + np.where(table.index == 3, 1, 0)))
    return str(tmp_path / "a"), str(tmp_path / "b")


@pytest.mark.parametrize("column", ["_merge", "_key"])
def test_columns_named_like_merge_internals_are_compared(tmp_path, column):
    """pandas' merge indicator and the old row-key column are ordinary column names now."""
    a, b = _both(tmp_path, rows(20).assign(**{column: "x"}))
    result = compare(a, b)
    (f,) = result.files
    assert len(f.shared) == 20 and len(f.missing) == len(f.new) == 0
    assert f.flagged["r"].tolist() == [pytest.approx(0.3)]
    assert cli(["compare", a, b, "--fail-on", "numbers"]) == 1


def test_a_column_named_as_a_computed_one_keeps_its_name_in_labels(tmp_path):
    """Attention results have a column ``kind``: it stays an identifying column (shared as
    ``kind (row)``, labelled ``kind=…``), not overwritten by compare's own ``kind``."""
    table = rows(20).assign(kind=np.where(np.arange(20) % 2, "swap", "base"), z=1.0)
    a, b = _both(tmp_path, table)
    (f,) = compare(a, b).files
    assert f.shared["kind (row)"].tolist() == table["kind"].tolist()
    assert set(f.shared["kind"]) == {"noisy"} and (f.shared["z (row)"] == 1.0).all()
    labels = row_table(compare(a, b), only_flagged=True)["row"].tolist()
    assert len(labels) == 1 and "kind=swap" in labels[0] and "z=1" in labels[0]
    write(tmp_path / "c", table.assign(**{"kind (row)": "x"}))
    with pytest.raises(UserError, match="'kind' and 'kind \\(row\\)'"):
        compare(tmp_path / "c", tmp_path / "c")


def test_separators_inside_values_cannot_join_two_rows(tmp_path):
    """("x␟y", "z") and ("x", "y␟z") are different rows, whatever character joins a row's key."""
    table = rows(1).assign(estimator="x\x1fy", kernel="z")
    write(tmp_path / "a", table)
    write(tmp_path / "b", table.assign(estimator="x", kernel="y\x1fz"))
    (f,) = compare(tmp_path / "a", tmp_path / "b").files
    assert len(f.shared) == 0 and len(f.missing) == len(f.new) == 1


def test_an_empty_text_and_a_missing_value_identify_a_row_alike(tmp_path):
    """A column one side lacks pairs with the other side's empty texts (and its missing
    values), never with a text; repeats of a row pair in order."""
    table = pd.concat([rows(3), rows(3)], ignore_index=True)
    write(tmp_path / "a", table.assign(note=["", "", "x", None, "", ""]))
    write(tmp_path / "b", table)
    (f,) = compare(tmp_path / "a", tmp_path / "b").files
    assert f.shared["r"].tolist() == [0.0, 0.1, 0.0, 0.1, 0.2]
    assert f.missing["note"].tolist() == ["x"] and f.new["r"].tolist() == [0.2]


def _hostile(tmp_path, metadata: bytes | None = None, pandas: bytes | None = None):
    """Folders a (healthy) and b whose file has this provenance or pandas metadata."""
    write(tmp_path / "a", rows(20))
    table = pa.Table.from_pandas(rows(20), preserve_index=False)
    meta = dict(table.schema.metadata)
    prov = make_provenance(config={"name": "a"}, seed=0, command_line="t")
    meta[METADATA_KEY] = json.dumps(prov).encode() if metadata is None else metadata
    if pandas is not None:
        meta[b"pandas"] = pandas
    path = tmp_path / "b" / "toy" / "a.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(table.replace_schema_metadata(meta), path)
    return str(tmp_path / "a"), str(tmp_path / "b"), str(path)


def _provenance(**changes) -> bytes:
    prov = make_provenance(config={"name": "a"}, seed=0, command_line="t")
    return json.dumps({**prov, **changes}).encode()


@pytest.mark.parametrize(
    ("metadata", "needle"),
    [
        (b"[1, 2]", "metadata is an array, not a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "maximum recursion depth"),
        (_provenance(config=["a"]), "provenance 'config' is list"),
        (_provenance(timing=[1]), "provenance 'timing' is list"),
        (_provenance(timing={"jobs_cpu_s": "fast"}), "timing 'jobs_cpu_s' is str 'fast'"),
        (_provenance(timing={"jobs_wall_s": True}), "timing 'jobs_wall_s' is bool True"),
        (_provenance(timing={"jobs_cpu_s": -1.0}), "timing 'jobs_cpu_s' is float -1.0"),
    ],
)
def test_hostile_provenance_is_one_line(tmp_path, capsys, metadata, needle):
    a, b, path = _hostile(tmp_path, metadata=metadata)
    assert cli(["compare", a, b]) == 2
    one_line(capsys, f"result file {path}", needle)


@pytest.mark.parametrize(
    "pandas",
    [b"[1]", b"{}", b'{"columns": [5, 6], "index_columns": []}', b"\xff", b"[" * 100_000],
)
def test_broken_pandas_metadata_is_one_line(tmp_path, capsys, pandas):
    a, b, path = _hostile(tmp_path, pandas=pandas)
    assert cli(["compare", a, b]) == 2
    one_line(capsys, f"result file {path}", "pandas metadata is broken")


@pytest.mark.slow  # a large file
def test_a_file_of_100_million_rows_is_refused_before_it_is_read(tmp_path, capsys, monkeypatch):
    """A 1 MB file whose footer says 100,000,000 rows (columns without values): the row count
    is read from the footer and refused against the budget; the rows are never read."""
    write(tmp_path / "a", rows(20))
    names = ["experiment", "figure", "estimator", "kernel", "metric", "value", "stderr",
             "n_trials"]  # fmt: skip
    table = pa.table({name: pa.nulls(100_000_000) for name in names})
    prov = make_provenance(config={"name": "a"}, seed=0, command_line="t")
    path = tmp_path / "b" / "toy" / "a.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(table.replace_schema_metadata({METADATA_KEY: json.dumps(prov).encode()}), path)
    del table

    def never(path):
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr(rfbench.present.compare.compare, "load_results", never)
    assert cli(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    one_line(capsys, f"result file {path} has 100,000,000 rows of 8 columns", "budget")


def test_max_memory_bounds_the_comparison(tmp_path, capsys):
    """20 rows × 9 columns × 2 files at 200 B per cell: about 70 KiB."""
    write(tmp_path / "a", rows(20))
    write(tmp_path / "b", rows(20))
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    assert cli(["compare", a, b, "--max-memory", "64K"]) == 2
    one_line(capsys, "has 20 rows of 9 columns", "more than the 64 KiB budget (--max-memory)")
    assert cli(["compare", a, b, "--max-memory", "1M"]) == 0
    capsys.readouterr()
    assert cli(["compare", a, b, "--max-memory", "lots"]) == 2
    one_line(capsys, "max-memory")


def test_markdown_to_a_folder_or_under_a_file_is_one_line(tmp_path, capsys):
    write(tmp_path / "a", rows(20))
    a = str(tmp_path / "a")
    assert cli(["compare", a, a, "--markdown", str(tmp_path)]) == 2
    one_line(capsys, f"--markdown {tmp_path} is a folder", "compare.md")
    (tmp_path / "file").write_text("")
    assert cli(["compare", a, a, "--markdown", str(tmp_path / "file" / "x.md")]) == 2
    one_line(capsys, "is a file, not a folder")
    assert cli(["compare", a, a, "--markdown", str(tmp_path / "new" / "cmp.md")]) == 0
    assert (tmp_path / "new" / "cmp.md").read_text().startswith("# rfbench compare")


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_result_path_that_is_no_regular_file_is_one_line(tmp_path, capsys, kind):
    """A FIFO named like a result file would block the reader forever."""
    write(tmp_path / "a", rows(20))
    write(tmp_path / "b", rows(20))
    odd = tmp_path / "b" / "toy" / "odd.parquet"
    os.mkfifo(odd) if kind == "fifo" else odd.mkdir()
    assert cli(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    one_line(capsys, f"{odd} is not a regular file")


def test_markdown_shows_names_from_the_files_as_text(tmp_path):
    """Names read from result files reach compare's markdown as text, never as HTML (as in
    REPORT.md): an estimator ``<script>`` was copied as written."""
    hostile = '<script>alert(1)</script>&"'
    table = rows(20).assign(estimator=hostile)
    a, b = _both(tmp_path, table)
    write(tmp_path / "b", table, name="<b>only")
    md = tmp_path / "cmp.md"
    assert cli(["compare", a, b, "--markdown", str(md)]) == 0
    text = md.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&amp;" in text and "&lt;b&gt;only" in text
    assert "<script" not in text and "<b>" not in text


def test_the_terminal_shows_names_as_written(tmp_path, capsys):
    """A ``[/red]`` in a name is no rich markup: it stopped compare with an internal error
    (MarkupError), and a ``[bold]`` vanished from the name it was in."""
    table = rows(20).assign(estimator="[/red] [bold]x")
    a, b = _both(tmp_path, table)
    write(tmp_path / "b", table, name="[red]only")
    assert cli(["compare", a, b]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "estimator=[/red] [bold]x" in out and "only in B: toy/[red]only.parquet" in out


def test_negative_rows_is_refused(tmp_path, capsys):
    """``--rows -5`` showed every row but the last five (pandas' head(-5))."""
    a, b = _both(tmp_path, rows(20))
    assert cli(["compare", a, b, "--rows", "-5"]) == 2
    one_line(capsys, "--rows")
