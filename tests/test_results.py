"""The result contract (docs/architecture.md#result-schema): schema validation, atomic parquet
files, provenance."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rfbench
from rfbench.compute import results
from rfbench.compute.results import (
    ResultSchemaError,
    load_provenance,
    load_results,
    make_provenance,
    register_metric,
    validate_results,
    write_results,
)


def _rows(**overrides: object) -> pd.DataFrame:
    data = {
        "experiment": "pointwise",
        "figure": "hrf-fig2",
        "estimator": ["trig@iid", "trig@iid", "positive@orf"],
        "kernel": "softmax",
        "metric": ["mean", "mse", "true"],
        "value": [1.25, 0.5, 2],
        "stderr": [0.01, 0.002, None],
        "n_trials": [1000, 1000, 0],
        "d": [16, 16, None],
        "r": [1, 1.5, 2.0],
        "dataset": [None, None, "wine"],
        "angle_index": [0, 1, 2],
        "zz_remark": ["a", None, "c"],
    }
    data.update(overrides)
    return pd.DataFrame(data)


def test_validate_canonical_dtypes_and_order() -> None:
    df = validate_results(_rows())
    assert list(df.columns[:8]) == list(results.REQUIRED_COLUMNS)
    assert list(df.columns[8:]) == [
        "d",
        "r",
        "dataset",
        "angle_index",
        "zz_remark",
    ]  # known, then sorted (a name no experiment registers)
    assert df["value"].dtype == np.float64 and df["stderr"].dtype == np.float64
    assert df["n_trials"].dtype == np.int64
    assert str(df["d"].dtype) == "Int64" and df["d"].isna().tolist() == [False, False, True]
    assert df["r"].dtype == np.float64  # a known float column stays float even if integral
    assert str(df["angle_index"].dtype) == "Int64"  # an extra column takes the kind of its values
    assert pd.api.types.is_string_dtype(df["zz_remark"])
    assert pd.api.types.is_string_dtype(df["kernel"])
    assert np.isnan(df["stderr"].iloc[2])
    pd.testing.assert_frame_equal(validate_results(df), df)  # idempotent


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"drop": "stderr"}, "lacks required column(s): stderr"),
        ({"metric": ["mean", "mse", "rmse"]}, "unknown metric(s) 'rmse'"),
        ({"value": ["1.0", "2.0", "3.0"]}, "column 'value' must hold float"),
        ({"estimator": ["trig@iid", None, "x"]}, "column 'estimator' has null values (row 1)"),
        ({"n_trials": [10, 10.5, 0]}, "column 'n_trials' must hold integers"),
        ({"n_trials": [10, -1, 0]}, "'n_trials' must be non-negative"),
        ({"d": ["16", "16", None]}, "column 'd' must hold int"),
        ({"kernel": [1, 2, 3]}, "column 'kernel' must hold string"),
        ({"blob": [[1], [2], [3]]}, "column 'blob' holds mixed values"),
    ],
)
def test_validate_rejects(change: dict, message: str) -> None:
    df = _rows()
    if "drop" in change:
        df = df.drop(columns=change.pop("drop"))
    df = df.assign(**change)
    with pytest.raises(ResultSchemaError) as info:
        validate_results(df)
    assert message in str(info.value)


def test_validate_rejects_non_frame() -> None:
    with pytest.raises(ResultSchemaError, match="pandas DataFrame"):
        validate_results([{"metric": "mean"}])  # type: ignore[arg-type]


def test_metric_registry_is_extensible_but_never_reuses_a_name(monkeypatch) -> None:
    monkeypatch.setattr(results, "METRICS", dict(results.METRICS))
    with pytest.raises(ValueError, match="already means"):
        register_metric("mse", "something else")
    register_metric("mse", results.METRICS["mse"])  # re-registering the same meaning is fine
    register_metric("kl_div", "KL divergence of the attention rows")
    validate_results(_rows(metric=["kl_div", "mse", "true"]))


def test_write_load_round_trip_with_provenance(tmp_path) -> None:
    config = {"experiment": "pointwise", "name": "x", "r": (0.5, 1.5), "m": np.int64(8)}
    prov = make_provenance(config=config, seed=7, command_line=["rfbench", "pointwise", "--r", "1"])
    path = write_results(_rows(), tmp_path / "sub" / "x.parquet", prov)
    assert path == tmp_path / "sub" / "x.parquet"
    pd.testing.assert_frame_equal(load_results(path), validate_results(_rows()), check_exact=True)

    got = load_provenance(path)
    assert got["config"] == {"experiment": "pointwise", "name": "x", "r": [0.5, 1.5], "m": 8}
    assert got["seed"] == 7 and got["command_line"] == "rfbench pointwise --r 1"
    assert got["rfbench_version"] == rfbench.__version__
    assert got["numpy"] == np.__version__ and got["pandas"] == pd.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", got["python"]) and got["scipy"]
    created = dt.datetime.fromisoformat(got["created"])
    assert created.utcoffset() == dt.timedelta(0)
    assert abs((dt.datetime.now(dt.UTC) - created).total_seconds()) < 600
    assert got["git_commit"] is None or re.fullmatch(r"[0-9a-f]{40}", got["git_commit"])
    # the metadata is plain JSON under the key "rfbench"
    raw = pq.read_schema(path).metadata[b"rfbench"]
    assert json.loads(raw) == got
    assert not [p for p in path.parent.iterdir() if p.name != "x.parquet"]


def test_write_requires_provenance_and_valid_rows(tmp_path) -> None:
    with pytest.raises(ValueError, match="provenance lacks 'config'"):
        write_results(_rows(), tmp_path / "a.parquet", {"seed": 0})
    prov = make_provenance(config={}, seed=0, command_line="x")
    with pytest.raises(ResultSchemaError):
        write_results(_rows(metric=["nope", "mse", "true"]), tmp_path / "a.parquet", prov)
    assert not list(tmp_path.iterdir())


def test_write_is_atomic(tmp_path, monkeypatch) -> None:
    path = tmp_path / "x.parquet"
    prov = make_provenance(config={}, seed=0, command_line="x")
    write_results(_rows(), path, prov)
    before = path.read_bytes()

    def crash(table: pa.Table, where: object, **kw: object) -> None:
        with open(where, "wb") as fh:  # type: ignore[arg-type]
            fh.write(b"PAR1 half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr(results.pq, "write_table", crash)
    with pytest.raises(KeyboardInterrupt):
        write_results(_rows(value=[9.0, 9.0, 9.0]), path, prov)
    with pytest.raises(KeyboardInterrupt):
        write_results(_rows(), tmp_path / "new.parquet", prov)
    assert path.read_bytes() == before  # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.parquet"]  # no temp file, no new file


def test_load_provenance_of_foreign_file(tmp_path) -> None:
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"a": [1]}), path)
    with pytest.raises(ResultSchemaError, match="not an rfbench result file"):
        load_provenance(path)


@pytest.mark.slow  # a real process
def test_the_schema_is_declared_in_one_place_not_by_imports():
    """Importing every built-in experiment adds no column or metric to the schema: what a column
    is does not depend on which modules happen to be imported (rfbench.compute.schema)."""
    code = (
        "import importlib, pkgutil\n"
        "from rfbench.compute import schema\n"
        "before = [dict(schema.METRICS), dict(schema.PARAMETER_COLUMNS)]\n"
        "before.append(set(schema.DERIVED_COLUMNS))\n"
        "import rfbench.compute.experiments as E, rfbench.compute.runner.core\n"
        "for m in pkgutil.walk_packages(E.__path__, E.__name__ + '.'):\n"
        "    importlib.import_module(m.name)\n"
        "after = (schema.METRICS, schema.PARAMETER_COLUMNS, schema.DERIVED_COLUMNS)\n"
        "print([sorted(set(a) ^ set(b)) for a, b in zip(before, after)])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[[], [], []]"
