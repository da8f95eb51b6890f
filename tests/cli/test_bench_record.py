"""Benchmarks write result files that ``rfbench compare`` reads: the slower commit fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rfbench.present.compare.compare import compare

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from record import OUT_ENV, record  # noqa: E402


def _run(folder: Path, ours: float, plain: float, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(OUT_ENV, str(folder))
    rows = [
        {"estimator": "rfbench", "d": 64, "metric": "cpu_s", "value": ours},
        {"estimator": "plain loop", "d": 64, "metric": "cpu_s", "value": plain, "baseline": True},
    ]
    return record("demo", rows, {"draws": 10})


def test_timing_ratio_counts_rfbench_rows_only(tmp_path: Path, monkeypatch) -> None:
    a = _run(tmp_path / "a", ours=1.0, plain=50.0, monkeypatch=monkeypatch)
    _run(tmp_path / "b", ours=2.0, plain=5.0, monkeypatch=monkeypatch)
    assert a == tmp_path / "a" / "bench" / "demo.parquet"
    result = compare(tmp_path / "a", tmp_path / "b")
    (file,) = result.files
    assert file.timing["ratio"] == pytest.approx(2.0)  # the baseline got 10x faster: ignored
    assert [f.name for f in result.slower(1.5)] == ["bench/demo.parquet"]
    assert not file.shared["flagged"].any() and set(file.shared["kind"]) == {"timing"}
