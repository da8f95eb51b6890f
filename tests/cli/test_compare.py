"""``rfbench compare``: row matching, family-wise flags, timing ratios, exit status."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from compare_helpers import N_ROWS
from compare_helpers import rows as _rows
from compare_helpers import write as _write

from rfbench.cli.app import cli
from rfbench.compute.checks import UserError
from rfbench.present.compare.compare import compare, compare_rows, flag_rows, parse_fail_on


@pytest.fixture
def folders(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _write(a, _rows())
    return a, b


def test_identical_folders_flag_nothing_and_exit_zero(folders, capsys):
    a, b = folders
    _write(b, _rows())
    result = compare(a, b)
    assert result.flagged_count() == 0 and result.missing_count() == 0
    assert result.tests == N_ROWS and result.files[0].timing["ratio"] == 1.0
    assert cli(["compare", str(a), str(b), "--fail-on", "numbers,slower:1.5"]) == 0


def test_a_number_moved_by_ten_se_is_flagged_and_fails(folders, tmp_path):
    a, b = folders
    moved = _rows()
    moved.loc[17, "value"] += 10 * np.sqrt(2) * 0.1  # 10 SE of the difference
    _write(b, moved)
    result = compare(a, b)
    flagged = result.files[0].flagged
    assert len(flagged) == 1 and flagged["r"].iloc[0] == pytest.approx(1.7)
    assert flagged["z"].iloc[0] == pytest.approx(10.0)
    md = tmp_path / "cmp.md"
    assert cli(["compare", str(a), str(b), "--markdown", str(md)]) == 0  # no --fail-on
    assert "r=1.7" in md.read_text() and "## Flagged rows" in md.read_text()
    assert cli(["compare", str(a), str(b), "--fail-on", "numbers"]) == 1
    for method in ("bonferroni", "none"):
        assert len(compare(a, b, method=method).files[0].flagged) == 1


def test_one_se_among_many_rows_is_not_flagged(folders):
    a, b = folders
    moved = _rows()
    moved.loc[3, "value"] += np.sqrt(2) * 0.1  # 1 SE
    moved.loc[5, "value"] -= 3.5 * np.sqrt(2) * 0.1  # 3.5 SE: beyond z = 3 alone, not among 400
    _write(b, moved)
    assert compare(a, b, z=4.0).flagged_count() == 0
    assert compare(a, b, z=3.0).flagged_count() == 0  # Holm over 400 rows needs |z| > 4.3
    assert compare(a, b, z=3.0, method="none").flagged_count() == 1  # uncorrected: row 5 only


def test_holm_steps_down_where_bonferroni_stops():
    """Two rows at z = 3.24 and 3.02, family-wise z = 3 (α = 0.0027): Bonferroni needs
    p < α/2 (only the first), Holm then tests the second at α (rejected too)."""
    base = _rows(2).assign(stderr=1 / np.sqrt(2))
    shared, _, _ = compare_rows(base, base.assign(value=base["value"] + [3.24, 3.02]))
    assert shared["z"].to_numpy() == pytest.approx([3.24, 3.02])
    assert flag_rows([shared], 3.0, "bonferroni") == 2
    assert shared["flagged"].tolist() == [True, False]
    flag_rows([shared], 3.0, "holm")
    assert shared["flagged"].tolist() == [True, True]
    flag_rows([shared], 3.3, "holm")
    assert shared["flagged"].tolist() == [False, False]


def test_new_missing_and_exact_rows(folders):
    a, b = folders
    rows = _rows()
    changed = rows.drop(index=[0, 1])
    extra = rows.iloc[:1].assign(r=99.0)
    exact = rows.iloc[2:3].assign(metric="true", stderr=np.nan, r=50.0)
    base_exact = exact.assign(value=exact["value"] + 1e-3)
    _write(a, pd.concat([rows, base_exact], ignore_index=True))
    _write(b, pd.concat([changed, extra, exact], ignore_index=True))
    result = compare(a, b)
    f = result.files[0]
    assert len(f.missing) == 2 and len(f.new) == 1 and f.new["r"].iloc[0] == 99.0
    assert len(f.flagged) == 1 and f.flagged["kind"].iloc[0] == "exact"
    assert cli(["compare", str(a), str(b), "--fail-on", "numbers"]) == 1


def test_round_off_is_not_a_change_but_a_real_move_is(tmp_path):
    """An exact zero computed as 1e-15 in A and 1.1e-15 in B, and a deterministic estimator whose
    repeated draws give an SE of 1e-17, are round-off; the same rows moved by 1e-6 are flagged."""
    rows = pd.DataFrame({
        "experiment": "toy", "figure": "", "estimator": ["oracle", "exact-map", "other"],
        "kernel": "softmax", "metric": "rel_frob", "value": [1.0e-15, 0.68, 0.9],
        "stderr": [np.nan, 1e-17, np.nan], "n_trials": 10, "r": 1.0,
    })  # fmt: skip
    _write(tmp_path / "a", rows)
    _write(tmp_path / "b", rows.assign(value=[1.1e-15, 0.68 + 3e-15, 0.9]))
    assert compare(tmp_path / "a", tmp_path / "b").flagged_count() == 0
    _write(tmp_path / "c", rows.assign(value=[1e-6, 0.68 + 1e-6, 0.9]))
    flagged = compare(tmp_path / "a", tmp_path / "c").files[0].flagged
    assert sorted(flagged["estimator"]) == ["exact-map", "oracle"]
    assert set(flagged["kind"]) == {"exact"}


def test_derived_columns_do_not_identify_rows(tmp_path):
    """A z against a baseline moves with the value it is computed from: the row is the same row
    (shared and tested), not a missing one and a new one."""
    from rfbench.compute.results import DERIVED_COLUMNS

    rows = _rows(20).assign(z_uniform=np.linspace(-3.0, 3.0, 20))
    _write(tmp_path / "a", rows)
    _write(tmp_path / "b", rows.assign(z_uniform=rows["z_uniform"] + 1e-9))
    f = compare(tmp_path / "a", tmp_path / "b").files[0]  # registers every experiment's columns
    assert len(f.shared) == 20 and len(f.missing) == len(f.new) == 0
    assert {"z_uniform", "beats_uniform", "resolved"} <= DERIVED_COLUMNS


def test_slower_files_fail_on_slower(folders):
    a, b = folders
    _write(b, _rows(), cpu=20.0)
    result = compare(a, b)
    assert result.files[0].timing["ratio"] == 2.0 and result.flagged_count() == 0
    assert cli(["compare", str(a), str(b), "--fail-on", "slower:1.5"]) == 1
    assert cli(["compare", str(a), str(b), "--fail-on", "slower:2.5"]) == 0
    assert cli(["compare", str(a), str(b), "--fail-on", "numbers"]) == 0


def test_single_files_and_user_errors(folders, tmp_path, capsys):
    a, b = folders
    other = _write(tmp_path / "c", _rows(), name="other")
    result = compare(a / "toy" / "a.parquet", other)
    assert result.flagged_count() == 0 and len(result.files) == 1
    capsys.readouterr()
    assert cli(["compare", str(a), str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rfbench: error:")
    assert cli(["compare", str(a), str(other)]) == 2  # a folder and a file
    assert cli(["compare", str(a), str(a), "--fail-on", "faster"]) == 2
    assert cli(["compare", str(a), str(a), "--z", "-1"]) == 2
    with pytest.raises(UserError):
        parse_fail_on(["slower:x"])
    assert parse_fail_on(["numbers", "slower:1.5"]) == (True, 1.5)
