"""User files are checked before they are read (rfbench.compute.datasets.filesize) and every
unusable one is exit 2 with one line naming the file: small files that declare huge arrays (an
``.npz`` member, an ``.npy`` header, parquet metadata, a long CSV) against the budget, under
``ulimit -v`` (tests/capped.py); and files that are not numbers a run can use."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from capped import run_capped
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.datasets.errors import DataError
from rfbench.compute.datasets.filesize import declared
from rfbench.compute.results import load_provenance


def _npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()


def _bomb_npz(path: Path, shape: tuple[int, int]) -> None:
    """An .npz whose X.npy member declares ``shape`` in float64 but holds 1 MiB of zeros."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("X.npy", "w", force_zip64=True) as member:
            member.write(_npy_header(shape) + bytes(2**20))


def test_headers_declare_what_a_file_holds(tmp_path: Path) -> None:
    np.savez(tmp_path / "qk.npz", Q=np.zeros((7, 3)), K=np.zeros((5, 3), np.float32))
    got = declared(tmp_path / "qk.npz")
    assert (got.rows, got.columns, got.values) == (7, 3, 36)
    assert got.nbytes >= 7 * 3 * 8 + 5 * 3 * 4
    (tmp_path / "t.csv").write_text("a,b,c\n1,2,3\n4,5,6")  # no final newline
    got = declared(tmp_path / "t.csv")
    assert (got.rows, got.columns) == (2, 3)
    pq.write_table(pa.table({"a": [1.0] * 9, "b": [2.0] * 9}), tmp_path / "t.parquet")
    assert declared(tmp_path / "t.parquet").rows == 9


@pytest.mark.slow  # real files expanded past a budget
def test_small_files_that_expand_past_the_budget_are_refused_before_reading(
    tmp_path: Path,
) -> None:
    _bomb_npz(tmp_path / "bomb.npz", (50_000_000, 15))  # 5.6 GiB declared, a few kB on disk
    (tmp_path / "huge.npy").write_bytes(_npy_header((10**8, 10**8)) + bytes(64))  # 71 PiB
    rows = 20_000_000  # parquet metadata: 40 M values, no values stored (all null)
    nulls = {"a": pa.nulls(rows, pa.float64()), "y": pa.nulls(rows, pa.string())}
    pq.write_table(pa.table(nulls), tmp_path / "rows.parquet", row_group_size=rows)
    (tmp_path / "long.csv").write_bytes(b"a,b,y\n" + b"1,2,u\n" * 2_000_000)  # 12 MB
    assert (tmp_path / "bomb.npz").stat().st_size < 2**20
    out = ["--out", str(tmp_path / "x.parquet"), "--quiet", "--no-plot", "--workers", "1"]
    cases = [
        (["gram", "--data", "bomb.npz", "--max-memory", "100M"], "100 MiB budget (--max-memory)"),
        (["gram", "--data", "huge.npy"], "ulimit -v"),
        (["classify", "--data", "rows.parquet", "--target", "y"], "ulimit -v"),
        (["classify", "--data", "long.csv", "--target", "y", "--max-memory", "20M"],
         "--max-memory"),
    ]  # fmt: skip
    results = run_capped([[*args, *out] for args, _ in cases], tmp_path)
    for (args, limit), (code, lines) in zip(cases, results, strict=True):
        assert code == 2 and len(lines) == 1, (args, lines)
        assert lines[0].startswith(f"rfbench: error: data file {args[2]}: declares"), lines[0]
        assert "once read, more than the" in lines[0] and limit in lines[0], lines[0]
    assert not (tmp_path / "x.parquet").exists()


def _refused(tmp_path: Path, args: list[str], *needles: str) -> str:
    out = tmp_path / "x.parquet"
    done = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet", "--no-plot"])
    line = one_line_error(done, *needles)
    assert not out.exists()
    return line


def test_a_large_npy_header_is_called_what_it_is(tmp_path: Path) -> None:
    text = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }" + " " * 20000 + "\n"
    path = tmp_path / "wide-header.npy"
    path.write_bytes(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(text)) + text.encode())
    line = _refused(tmp_path, ["gram", "--data", str(path)], "header is 20060 bytes", "10000")
    assert "pickle" not in line


def test_durations_are_not_numbers(tmp_path: Path) -> None:
    path = tmp_path / "durations.npy"
    np.save(path, np.arange(20).reshape(10, 2).astype("timedelta64[s]"))
    _refused(tmp_path, ["gram", "--data", str(path)], "durations.npy", "timedelta64[s]")


def test_a_header_only_csv_has_no_rows(tmp_path: Path) -> None:
    path = tmp_path / "header.csv"
    path.write_text("a,b,c,y\n")
    _refused(tmp_path, ["gram", "--data", str(path)], "header.csv: has no rows")
    _refused(tmp_path, ["classify", "--data", str(path), "--target", "y"], "has no rows")


def test_parquet_with_broken_pandas_metadata_is_a_user_error(tmp_path: Path) -> None:
    frame = pd.DataFrame({"a": np.arange(50.0), "b": np.ones(50), "y": ["u", "v"] * 25})
    table = pa.Table.from_pandas(frame)
    meta = {**table.schema.metadata, b"pandas": b'{"index_columns": [], "columns": 7}'}
    path = tmp_path / "meta.parquet"
    pq.write_table(table.replace_schema_metadata(meta), path)
    _refused(tmp_path, ["classify", "--data", str(path), "--target", "y"],
             "meta.parquet: its pandas metadata is broken")  # fmt: skip


def test_a_table_too_small_for_the_split_names_the_minimum(tmp_path: Path) -> None:
    path = tmp_path / "ten.csv"
    pd.DataFrame({"a": np.arange(10.0), "b": np.ones(10), "y": ["u", "v"] * 5}).to_csv(
        path, index=False
    )
    _refused(tmp_path, ["classify", "--data", str(path), "--target", "y"],
             "ten.csv: 10 rows, too few for the simrf split", "at least 20 rows")  # fmt: skip


def test_provenance_names_the_data_that_replaced_the_profiles(tmp_path: Path) -> None:
    path = tmp_path / "sixty.csv"
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.standard_normal((60, 3)), columns=list("abc"))
    frame.assign(y=["u", "v"] * 30).to_csv(path, index=False)
    out = tmp_path / "c.parquet"
    args = ["classify", "--data", str(path), "--target", "y", "--profile", "quick",
            "--estimators", "positive@iid", "--m", "1", "--trials", "2"]  # fmt: skip
    done = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet", "--no-plot"])
    assert done.exit_code == 0, done.output
    config = load_provenance(out)["config"]
    assert config["dataset"] == [] and config["data"].startswith(f"{path}#y@")


def test_the_data_file_sets_the_size_of_the_memory_estimate(tmp_path: Path) -> None:
    """5000 points (80 kB) make 5000 × 5000 Gram matrices: the estimate reads N from the file."""
    path = tmp_path / "points.npy"
    np.save(path, np.random.default_rng(0).standard_normal((5000, 2)))
    args = ["gram", "--data", str(path), "--max-memory", "200M"]
    _refused(tmp_path, args, "200 MiB budget (--max-memory)", "points.npy", "use fewer rows")


def test_a_huge_sparse_npy_is_refused_by_its_header_before_it_is_hashed(
    monkeypatch, tmp_path: Path
) -> None:
    """Issue 44 item 6: a 6 GB sparse .npy was hashed whole (minutes) before its header said it
    cannot fit; now the header is read first and nothing else."""
    from rfbench.compute import memlimits
    from rfbench.compute.datasets import user as user_files

    path = tmp_path / "huge.npy"
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(
            fh, {"descr": "<f8", "fortran_order": False, "shape": (40_000, 20_000)}
        )
        fh.truncate(fh.tell() + 8 * 40_000 * 20_000)  # 6.4 GB, sparse: no block written

    def no_hash(*_a, **_k):
        raise AssertionError("hashed before the header was checked")

    monkeypatch.setattr(user_files, "digest", no_hash)
    monkeypatch.setattr(memlimits, "_requested", 1 << 30)
    for call in (
        lambda: user_files.reference(path),
        lambda: user_files.load_points(f"{path}@{'0' * 16}"),
    ):
        with pytest.raises(DataError, match="budget"):
            call()
