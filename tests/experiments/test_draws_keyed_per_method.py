"""Issue 39: a method's numbers do not depend on which other methods are in the run. Every draw
is keyed on what it is (the estimator, its parameters, the job), never on its position in a list
(docs/architecture.md#seeding), so adding a method leaves ``positive@iid``'s rows bit-identical."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.experiments import get_experiment
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run

ALONE = ["positive@iid"]


def _rows(tmp_path: Path, experiment: str, overrides: dict, tag: str) -> pd.DataFrame:
    config = get_experiment(experiment).resolve_config(overrides, "quick")
    out = tmp_path / f"{tag}.parquet"
    run(experiment, config, RunOptions(seed=3, out=out, backend="serial", quiet=True, force=True))
    rows = load_results(out)
    mine = rows[rows["estimator"] == "positive@iid"].dropna(axis=1, how="all")
    keys = [c for c in mine.columns if c not in ("value", "stderr", "n_trials", "note")]
    return mine.sort_values([c for c in keys if mine[c].notna().all()]).reset_index(drop=True)


def _same_with_and_without(tmp_path: Path, experiment: str, overrides: dict, more: list[str]):
    alone = _rows(tmp_path, experiment, {**overrides, "estimators": ALONE}, "alone")
    with_others = _rows(tmp_path, experiment, {**overrides, "estimators": [*more, *ALONE]}, "more")
    assert len(alone) > 0
    # the comparisons with another method (pointwise's diff_mse) exist only beside one
    with_others = with_others[with_others["metric"].isin(set(alone["metric"]))]
    with_others = with_others.reset_index(drop=True)
    common = [c for c in alone.columns if c in with_others.columns]
    pd.testing.assert_frame_equal(alone[common], with_others[common], check_exact=True)
    return alone


def test_attention_draws_of_a_method_ignore_the_others(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    shape = (2, 24, 8)
    np.savez(tmp_path / "qkv.npz", q=0.5 * rng.standard_normal(shape),
             k=0.5 * rng.standard_normal(shape), v=rng.standard_normal(shape))  # fmt: skip
    overrides = {"data": str(tmp_path / "qkv.npz"), "budget": [8], "draws": 4, "swap": False}
    alone = _same_with_and_without(
        tmp_path, "attention", overrides, ["trig@iid", "window", "hyperbolic@orf"]
    )
    assert "out_rel_frob" in set(alone["metric"])


@pytest.mark.parametrize(
    ("experiment", "overrides", "more"),
    [
        ("pointwise", {"r": [1.5], "angles": 3, "d": 4, "samples": 64},
         ["trig@iid", "positive@orf"]),
        ("gram", {"d": 4, "m": [4]}, ["trig@iid", "positive@orf"]),
        ("classify", {"dataset": ["wine"], "m": [2], "trials": 2}, ["trig@iid", "positive@orf"]),
    ],
)  # fmt: skip
def test_a_methods_rows_ignore_the_others(tmp_path: Path, experiment, overrides, more) -> None:
    _same_with_and_without(tmp_path, experiment, overrides, more)
