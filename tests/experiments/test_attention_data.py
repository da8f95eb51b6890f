"""attention --data: q, k, v in either case; all-zero and ×1e300 arrays decided by the math."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.results import load_results

RUN = ("--budget", 8, "--draws", 3, "--estimators", "positive@iid", "--backend", "serial",
       "--quiet", "--no-plot")  # fmt: skip
KEY = ["kind", "estimator", "metric", "head", "budget", "rank"]


def run(path: Path, out: Path):
    return CliRunner().invoke(app, ["attention", "--data", str(path), "--out", str(out),
                                    *map(str, RUN)])  # fmt: skip


def heads(seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"q": 0.4 * rng.standard_normal((2, 16, 4)), "k": 0.4 * rng.standard_normal((2, 16, 4)),
            "v": rng.standard_normal((2, 16, 4))}  # fmt: skip


def rows_of(tmp_path: Path, name: str, arrays: dict[str, np.ndarray]) -> pd.DataFrame:
    path = tmp_path / f"{name}.npz"
    np.savez(path, **arrays)
    res = run(path, tmp_path / f"{name}.parquet")
    assert res.exit_code == 0, res.output
    rows = load_results(tmp_path / f"{name}.parquet")
    assert np.isfinite(rows["value"]).all()
    return rows.sort_values(KEY).reset_index(drop=True)


def deterministic(rows: pd.DataFrame) -> pd.Series:
    """The baselines' values (uniform, zero, best-rank, head statistics): the estimators' draws
    are seeded by the job, which names the file's checksum."""
    return rows[rows["kind"] == "baselines"]["value"]


def test_upper_case_q_k_v_are_the_same_heads(tmp_path: Path) -> None:
    arrays = heads()
    lower = rows_of(tmp_path, "lower", arrays)
    upper = rows_of(tmp_path, "upper", {n.upper(): a for n, a in arrays.items()})
    pd.testing.assert_series_equal(deterministic(lower), deterministic(upper))
    assert len(lower) == len(upper)
    both = tmp_path / "both.npz"
    np.savez(both, **arrays, Q=arrays["q"])
    one_line_error(run(both, tmp_path / "o.parquet"), "both 'q' and 'Q'")


def test_values_scaled_by_a_power_of_two_or_1e300_give_the_same_errors(tmp_path: Path) -> None:
    """Every output metric is relative and O = AV is linear in V: scaling V changes nothing
    (exactly for 2^900; to rounding, a few ulps, for 1e300, which is no power of two). Today
    ‖O‖² overflows: exit 1."""
    arrays = heads()
    base = rows_of(tmp_path, "base", arrays)
    exact = rows_of(tmp_path, "pow2", {**arrays, "v": np.ldexp(arrays["v"], 900)})
    pd.testing.assert_series_equal(deterministic(base), deterministic(exact))
    big = rows_of(tmp_path, "big", {**arrays, "v": 1e300 * arrays["v"]})
    # relative errors that are themselves round-off (a full-rank oracle: ~T·eps) agree to ~1e-16
    np.testing.assert_allclose(deterministic(big), deterministic(base), rtol=1e-12, atol=1e-14)
    assert len(big) == len(base)


def test_all_zero_queries_and_keys_are_uniform_attention(tmp_path: Path) -> None:
    """q = k = 0: every logit is 0, the attention is uniform, so uniform attention's error is 0
    up to the rounding of two sums of 16 terms in different orders;
    the anisotropy of a zero matrix (0/0) has no row."""
    arrays = heads()
    rows = rows_of(tmp_path, "zero", {**arrays, "q": 0 * arrays["q"], "k": 0 * arrays["k"]})
    uniform = rows[(rows["estimator"] == "uniform") & (rows["metric"] == "out_rel_frob")]
    assert (uniform["value"] < 16 * np.finfo(float).eps).all() and len(uniform) == 2  # 16 terms
    assert not rows["metric"].isin(["q_anisotropy", "k_anisotropy"]).any()


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"v": 0.0}, "array 'v' is all zero in head 0"),
        ({"q": 1e300, "k": 1e300}, "logits qᵀk beyond float64"),
    ],
)
def test_heads_without_a_defined_error_exit_2(tmp_path: Path, change, needle) -> None:
    arrays = {name: change.get(name, 1.0) * a for name, a in heads().items()}
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    one_line_error(run(path, tmp_path / "o.parquet"), needle, str(path))
