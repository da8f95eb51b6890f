"""Errors are errors: a check that raises fails ``rfbench report`` with exit 1 and a log, never a
"no match" verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rfbench.cli.app import app

RESULTS = Path(__file__).resolve().parents[2] / "results"


@pytest.mark.slow
@pytest.mark.skipif(not RESULTS.is_dir(), reason="committed results absent")
def test_a_bug_in_a_check_is_exit_1_not_a_verdict(tmp_path: Path, monkeypatch) -> None:
    from rfbench.present.report import claims

    def broken(ctx):
        return 1 / 0

    monkeypatch.setitem(claims.KINDS, "count", broken)
    monkeypatch.setenv("RFBENCH_LOG_DIR", str(tmp_path))
    out = tmp_path / "REPORT.md"
    done = CliRunner().invoke(app, ["report", "--results", str(RESULTS), "--out", str(out)])
    assert done.exit_code == 1, done.output
    assert "internal error" in done.output and "ZeroDivisionError" in done.output
    assert not out.exists()


def test_a_check_is_parsed_once_into_a_typed_object() -> None:
    from rfbench.present import reference
    from rfbench.present.reference.loader import Check, ReferenceDataError, make_entry

    claims = [e for e in reference.load() if isinstance(e, reference.ClaimEntry)]
    assert claims and all(isinstance(c.check, Check) for c in claims)
    check = next(c.check for c in claims if c.id == "hrf-table1-ordering")
    assert check.kind == "ordering" and check.for_each == ("figure", "dataset")
    with pytest.raises(TypeError):
        check.where["estimator"] = "x"  # type: ignore[index]  # read-only
    raw = {"id": "hrf-x", "source": "s", "statement": "s", "check": {"kind": "nope"}}
    with pytest.raises(ReferenceDataError, match="check.kind"):
        make_entry("claim", raw, "hrf", "t.toml")
