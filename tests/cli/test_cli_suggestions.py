"""A misspelt command or estimator gets the closest names in one short line (issue 31 item 8)."""

from __future__ import annotations

import pytest

from rfbench.cli.app import cli
from rfbench.compute.features import registry


def _one_line(capsys) -> str:
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


def test_a_misspelt_command_gets_did_you_mean(capsys) -> None:
    assert cli(["pointwsie"]) == 2
    line = _one_line(capsys)
    assert "No such command 'pointwsie'. Did you mean 'pointwise'?" in line
    assert cli(["qqqqqq"]) == 2
    assert "Did you mean" not in _one_line(capsys)  # nothing alike: no guess


@pytest.mark.parametrize(
    ("name", "closest"),
    [("trgi@orf", "'trig@orf'"), ("postive", "'positive'"), ("trig@ofr", "'trig@orf'")],
)
def test_an_unknown_estimator_gets_the_closest_names_not_the_whole_list(name, closest) -> None:
    with pytest.raises(registry.UnknownEstimatorError) as exc:
        registry.describe(name)
    text = str(exc.value)
    assert f"closest: {closest}" in text and "rfbench list estimators" in text
    assert len(text) < 200, text  # was 522 characters: every component and coupling


def test_an_unknown_estimator_on_the_command_line(tmp_path, capsys) -> None:
    out = str(tmp_path / "x.parquet")
    assert cli(["pointwise", "--estimators", "trgi@orf", "--out", out]) == 2
    line = _one_line(capsys)
    assert "closest: 'trig@orf'" in line and len(line) < 250, line
