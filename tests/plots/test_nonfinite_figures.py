"""A result file with infinite values (an estimator that overflowed) still gives its paper figure:
those rows are left out and said so, never an internal error that stops every other figure."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from rfbench.cli.app import app

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_infinite_values_are_left_out_of_a_figure(tmp_path: Path) -> None:
    source = RESULTS / "pointwise" / "cse-fig1.parquet"
    path = tmp_path / "results" / "pointwise" / "cse-fig1.parquet"
    path.parent.mkdir(parents=True)
    shutil.copyfile(source, path)
    table = pq.read_table(path)  # the provenance kept: an rfbench result file still
    value = table["value"].to_numpy().copy()
    value[::5], value[1::7] = np.inf, -np.inf
    bad = int(np.isinf(value).sum())
    i = table.schema.get_field_index("value")
    pq.write_table(table.set_column(i, "value", pa.array(value)), path)
    out = tmp_path / "figures"
    args = ["figures", "--results", str(tmp_path / "results"), "--out", str(out)]
    done = CliRunner().invoke(app, [*args, "--only", "cse-fig1", "--strict"])
    assert done.exit_code == 0, done.output
    assert f"{bad} row(s) of infinite value left out" in " ".join(done.output.split())
    assert (out / "cse-fig1.png").stat().st_size > 10_000
