"""Attention sinks in the window methods (StreamingLLM): the first tokens always attended, the same
keys per row (docs/methods.md#local-attention)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments.attention.local import window_mask


@pytest.mark.parametrize("causal", [False, True])
def test_sinks_are_seen_by_every_row_and_the_window_shrinks_by_them(causal: bool) -> None:
    t, w, s = 30, 8, 3
    mask = window_mask(t, t, w, causal, sinks=s)
    plain = window_mask(t, t, w - s, causal)
    for i in range(t):
        sinks = set(range(min(s, i + 1))) if causal else set(range(s))
        assert set(np.flatnonzero(mask[i])) == sinks | set(np.flatnonzero(plain[i]))
        assert mask[i].sum() <= w
    if causal:
        assert not mask[np.triu_indices(t, 1)].any()
    np.testing.assert_array_equal(
        window_mask(t, t, w, causal, sinks=0), window_mask(t, t, w, causal)
    )


def test_sinks_must_be_fewer_than_the_window() -> None:
    with pytest.raises(ValueError, match="sinks"):
        window_mask(10, 10, 4, sinks=4)


def _data(tmp_path) -> str:
    rng = np.random.default_rng(0)
    path = tmp_path / "heads.npz"
    np.savez(path, q=rng.normal(size=(2, 64, 8)) * 0.5, k=rng.normal(size=(2, 64, 8)) * 0.5,
             v=rng.normal(size=(2, 64, 8)))  # fmt: skip
    return str(path)


def _run(tmp_path, *args: object):
    return CliRunner().invoke(
        app,
        ["attention", "--data", _data(tmp_path), "--estimators", "window,window+positive@orf",
         "--budget", "8", "--draws", "2", "--out", str(tmp_path / "out.parquet"),
         "--backend", "serial", "--quiet", *map(str, args)],
    )  # fmt: skip


@pytest.mark.parametrize("causal", [(), ("--causal",)])
def test_attention_rows_name_their_sinks_and_differ_from_a_plain_window(tmp_path, causal) -> None:
    res = _run(tmp_path, "--sinks", 2, *causal)
    assert res.exit_code == 0, res.output
    rows = pd.read_parquet(tmp_path / "out.parquet")
    local = rows[rows.estimator.isin(["window", "window+positive@orf"])]
    assert (local.sinks == 2).all()
    res = _run(tmp_path, *causal, "--out", str(tmp_path / "plain.parquet"))
    plain = pd.read_parquet(tmp_path / "plain.parquet")
    key = ["estimator", "metric", "head"]
    a = local[local.estimator == "window"].set_index(key).value
    b = plain[plain.estimator == "window"].set_index(key).value
    assert not np.allclose(a.sort_index(), b.reindex(a.index).sort_index())


def test_sinks_as_many_as_a_window_s_keys_is_one_line(tmp_path) -> None:
    one_line_error(_run(tmp_path, "--sinks", 4), "fewer than window+positive@orf's 4 exact keys")
