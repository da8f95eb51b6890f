"""User errors are user errors: each bad input below exits 2 with one line, before any job runs.

(A subset of the inputs a reliability probe reported as 'internal error'; the range limits of r
and σ for each estimator are still open.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rfbench.cli import app

BAD = [
    (["pointwise", "--m", "64,64"], "'m': 64 is listed twice"),
    (["pointwise", "--r", "1,1"], "'r': 1.0 is listed twice"),
    (["pointwise", "--estimators", "trig@iid,trig@iid"], "'trig@iid' is listed twice"),
    (["classify", "--dataset", "wine,wine"], "'wine' is listed twice"),
    (["gram", "--sigma", "inf"], "'sigma': inf (allowed: a finite number)"),
    (["classify", "--sigma", "inf"], "'sigma': inf (allowed: a finite number)"),
    (["gram", "--sigma", "nan"], "'sigma': nan (allowed: a finite number)"),
    (["classify", "--trials-by-dataset", "wine=5,wine=6"], "'wine' is given twice"),
    (["classify", "--trials-by-dataset", "wine"], "(expected name=value,...)"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args, message) -> None:
    out = tmp_path / "x.parquet"
    done = CliRunner().invoke(app, [*args, "--out", str(out), "--quiet"])
    assert done.exit_code == 2, done.output
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rfbench: error:") and message in lines[0]
    assert not out.exists()


def test_lists_whose_default_repeats_a_value_may_repeat() -> None:
    from rfbench.experiments import get_experiment

    classify = get_experiment("classify")
    assert classify.defaults["subset"] == [0, 0]  # (train, test) sizes, not a set of values
    assert classify.check_config({"subset": [0, 0]})["subset"] == [0, 0]
