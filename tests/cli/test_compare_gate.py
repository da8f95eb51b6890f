"""``rfbench compare --fail-on numbers`` fails when a number moved, became non-finite or vanished,
and never judges runs of different configs row by row unless asked (issues 31.3, 32.2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from compare_helpers import one_line, rows, write

from rfbench.cli.app import cli
from rfbench.present.compare.compare import compare, compare_rows, flag_rows

GATE = ["--fail-on", "numbers"]


@pytest.mark.parametrize(
    ("a", "b", "moved"),
    [
        (2.029, np.inf, True),
        (2.029, -np.inf, True),
        (np.inf, 2.029, True),
        (np.inf, -np.inf, True),
        (np.inf, np.inf, False),
        (-np.inf, -np.inf, False),
    ],
)
def test_a_value_that_became_infinite_fails_the_gate(tmp_path, capsys, a, b, moved):
    """One row of 400 at A 2.029, B inf (every draw of a head diverged) is a change, however
    large its SE; the same infinity on both sides is not."""
    base = rows()
    write(tmp_path / "a", base.assign(value=base["value"].where(base.index != 7, a)))
    write(tmp_path / "b", base.assign(value=base["value"].where(base.index != 7, b)))
    result = compare(tmp_path / "a", tmp_path / "b")
    assert result.flagged_count() == int(moved)
    if moved:
        assert result.files[0].flagged["r"].tolist() == [pytest.approx(0.7)]
    assert cli(["compare", str(tmp_path / "a"), str(tmp_path / "b"), *GATE]) == int(moved)
    if moved:
        assert "1 row(s) moved beyond their noise or became non-finite" in capsys.readouterr().err


def test_nan_on_one_side_is_flagged_and_on_both_is_not():
    """Result files cannot hold a NaN value (the schema refuses it), but tables passed to
    compare_rows can: NaN against a number is a change, NaN against NaN is not, and so is a
    standard error that became infinite."""
    base = rows(4)
    b = base.assign(value=[np.nan, base["value"][1], np.nan, base["value"][3]],
                    stderr=[0.1, 0.1, 0.1, np.inf])  # fmt: skip
    a = base.assign(value=[base["value"][0], base["value"][1], np.nan, base["value"][3]])
    shared, _, _ = compare_rows(a, b)
    flag_rows([shared], 4.0)
    assert shared["flagged"].tolist() == [True, False, False, True]
    assert shared["kind"].tolist() == ["non-finite", "noisy", "non-finite", "non-finite"]


def test_a_result_file_of_a_missing_in_b_fails_the_gate(tmp_path, capsys):
    write(tmp_path / "a", rows())
    write(tmp_path / "a", rows(), name="other")
    write(tmp_path / "b", rows())
    result = compare(tmp_path / "a", tmp_path / "b")
    assert result.only_a == ["toy/other.parquet"] and result.flagged_count() == 0
    assert cli(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0  # no gate asked
    capsys.readouterr()
    assert cli(["compare", str(tmp_path / "a"), str(tmp_path / "b"), *GATE]) == 1
    assert "1 result file(s) of A missing in B (toy/other.parquet)" in capsys.readouterr().err
    # a file only B has is new, not a failure
    assert cli(["compare", str(tmp_path / "b"), str(tmp_path / "a"), *GATE]) == 0


def _run(folder, r_values, trials=100, profile="paper", **config):
    """A run of the toy config with these r (a parameter column) and trials (not a column): a
    mean r/2 with SE 0.1 and a quantile without SE per r."""
    table = rows(len(r_values)).assign(r=r_values, n_trials=trials, value=np.divide(r_values, 2))
    quantile = table.assign(metric="q05", stderr=np.nan, value=table["value"] / trials)
    config = {"profile": profile, "r": list(r_values), "trials": trials, **config}
    return write(folder, pd.concat([table, quantile], ignore_index=True), config=config)


def test_runs_of_different_profiles_are_refused_in_one_line(tmp_path, capsys):
    """The README's old example: the committed paper-profile results against quick runs."""
    _run(tmp_path / "paper", [0.5, 1.0, 1.5], trials=1000)
    _run(tmp_path / "quick", [1.0], trials=50, profile="quick")
    assert cli(["compare", str(tmp_path / "paper"), str(tmp_path / "quick"), *GATE]) == 2
    one_line(capsys, "1 of 1 file(s)", "toy/a.parquet", "profile paper vs quick",
             "r [0.5, 1.0, 1.5] vs [1.0]", "trials 1000 vs 50", "--across-configs")  # fmt: skip
    _run(tmp_path / "default", [0.5, 1.0, 1.5], trials=1000, profile=None)
    assert cli(["compare", str(tmp_path / "paper"), str(tmp_path / "default")]) == 2
    one_line(capsys, "profile paper vs default")


def test_across_configs_compares_only_the_rows_both_could_have(tmp_path, capsys):
    """With --across-configs, rows the other config never asked for are outside, not missing;
    a quantile over 1000 draws is not compared exactly with one over 50; no time ratio is formed
    over different work; and a move beyond the noise is still flagged."""
    paper, quick = tmp_path / "paper", tmp_path / "quick"
    _run(paper, [0.5, 1.0, 1.5], trials=1000)
    _run(quick, [1.0], trials=50, profile="quick")
    result = compare(paper, quick, across_configs=True)
    (f,) = result.files
    assert len(f.shared) == 2 and len(f.missing) == len(f.new) == 0 and f.outside == 4
    assert sorted(f.outside_a["r"]) == [0.5, 0.5, 1.5, 1.5] and f.timing["ratio"] is None
    assert set(f.config_diff) == {"profile", "r", "trials"}
    assert f.shared.set_index("metric")["kind"].to_dict() == {"mean": "noisy", "q05": "untested"}
    assert result.flagged_count() == 0 and result.missing_count() == 0
    capsys.readouterr()
    assert cli(["compare", str(paper), str(quick), "--across-configs", *GATE]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rfbench: warning: A and B ran different")
    assert len(err) < 300
    moved = rows(1).assign(r=[1.0], n_trials=50, value=0.5 + 1.0)  # 7 SE of the difference
    write(quick, moved, config={"profile": "quick", "r": [1.0], "trials": 50})
    assert cli(["compare", str(paper), str(quick), "--across-configs", *GATE]) == 1


def test_rows_a_run_of_the_same_config_lost_are_missing(tmp_path, capsys):
    _run(tmp_path / "a", [0.5, 1.0, 1.5])
    table = rows(3).assign(r=[0.5, 1.0, 1.5])
    write(tmp_path / "b", table.iloc[:2], config={"profile": "paper", "r": [0.5, 1.0, 1.5],
                                                  "trials": 100})  # fmt: skip
    result = compare(tmp_path / "a", tmp_path / "b")
    assert result.missing_count() == 4 and not result.differing()
    assert cli(["compare", str(tmp_path / "a"), str(tmp_path / "b"), *GATE]) == 1
    assert "4 row(s) of A missing in B" in capsys.readouterr().err


def test_the_same_config_under_another_name_is_one_config(tmp_path):
    """Two single files are compared whatever their names: the name is a label, not a setting."""
    a = write(tmp_path / "a", rows(), config={"profile": "quick"}, name="first")
    b = write(tmp_path / "b", rows(), config={"profile": "quick"}, name="second")
    assert not compare(a, b).differing()


def test_timings_that_differ_are_not_listed_as_moved_numbers(tmp_path):
    """Every rerun's timings differ: the summary's time B/A tells them, the table of moved
    numbers does not list them."""
    from rfbench.present.compare.output import row_table

    table = rows(4).assign(metric=["mean", "mean", "time_s", "cpu_s"])
    write(tmp_path / "a", table)
    write(tmp_path / "b", table.assign(value=table["value"] + [0.0, 0.01, 1.0, 1.0]))
    moved = row_table(compare(tmp_path / "a", tmp_path / "b"), moved=True)
    assert len(moved) == 1 and "metric=mean" in moved["row"].iloc[0]
