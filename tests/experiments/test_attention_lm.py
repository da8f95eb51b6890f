"""rfbench attention --model smollm2-135m: the attention study on the packaged causal LM's query
heads (causal, one draw per key/value head) and its perplexity after the swap
(docs/experiments.md#attention-on-a-language-model)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tiny_llama
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments import get_experiment
from rfbench.compute.experiments.attention.lm import data
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run

LM = "smollm2-135m"
METHODS = ["positive@orf", "positive@fitted", "hedgehog", "window", "window+positive@orf", "top-k"]
pytestmark = tiny_llama.needs_packaged_lm


@pytest.mark.parametrize(
    ("args", "needle"),
    [(("--window", 8), "its windows take their keys from F"),
     (("--stop", "resolved"), "its query heads share their draws"),
     (("--tokens", 9000), "at most the model's 8192"),
     (("--swap-tokens", 8000), "held-out text GFDL-1.3 has"),
     (("--layers", 30), "layers 0..29"),
     (("--estimators", "hedgehog", "--budget", 1), "at least 2 features")],
)  # fmt: skip
def test_bad_input_is_one_line(args, needle, tmp_path) -> None:
    res = CliRunner().invoke(
        app,
        ["attention", "--model", LM, *map(str, args), "--out", str(tmp_path / "a.parquet"),
         "--backend", "serial", "--quiet"],
    )  # fmt: skip
    one_line_error(res, needle)


def test_data_and_a_language_model_is_one_line(tmp_path) -> None:
    heads = tmp_path / "heads.npz"
    x = np.random.default_rng(0).normal(size=(8, 4))
    np.savez(heads, q=x, k=x, v=x)
    test_bad_input_is_one_line(("--data", heads), "--data replaces the model", tmp_path)


def test_the_quick_profile_of_a_language_model_is_its_own() -> None:
    exp = get_experiment("attention")
    config = exp.resolve_config({"model": LM}, "quick")
    assert config["layers"] == [0] and config["max_heads"] == 0 and config["budget"] == [16]
    assert exp.resolve_config({}, "quick")["max_heads"] == 4  # the encoder's quick profile as is


def test_a_fit_of_more_than_one_sequence_cuts_the_whole_text() -> None:
    whole = data.fitting(LM, 0)
    parts = data.fit_sequences(LM, 0, 512)
    assert {len(p) for p in parts[:-1]} == {512} and 0 < len(parts[-1]) <= 512
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    assert data.fit_keys(128, 256) == {"fit_tokens": 128}  # one sequence: the spec as before
    assert data.fit_keys(0, 256) == {"fit_tokens": 0, "fit_length": 256}


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("attention-lm") / "small.parquet"
    overrides = {"model": LM, "tokens": [32], "layers": [2], "budget": [32], "draws": 2,
                 "estimators": METHODS, "fit_tokens": 64, "swap_budget": [32], "swap_trials": 2,
                 "swap_tokens": 32, "swap_per_layer": ["window"]}  # fmt: skip
    config = get_experiment("attention").resolve_config(overrides, "quick")
    run("attention", config, RunOptions(out=out, backend="serial", quiet=True))
    return load_results(out)


@pytest.mark.slow  # the packaged model's passes
def test_causal_head_rows_one_per_query_head_naming_its_key_value_head(rows) -> None:
    heads = rows[(rows.kind == "heads") & (rows.metric == "out_rel_frob")]
    assert set(heads.estimator) == set(METHODS) and heads.causal.all()
    for _, method in heads.groupby("estimator"):
        assert sorted(method["head"]) == list(range(9))  # every query head, once
    np.testing.assert_array_equal(heads["kv_head"], heads["head"] // 3)
    assert heads.note.str.contains("one draw per key/value head").all()
    window = heads[heads.estimator == "window"]
    np.testing.assert_allclose(window.value, 0, atol=1e-9)  # 32 keys cover 32 tokens: exact
    # one draw per key/value head: the query heads of a group share the draw, so a random map's
    # per-draw errors differ across heads, but its fit cost is per key/value head
    fits = rows[rows.metric == "fit_seconds"]
    assert set(fits[fits.kind == "heads"]["kv_head"]) == {0, 1, 2}
    base = rows[(rows.kind == "baselines") & (rows.estimator == "uniform")]
    assert set(base["head"]) == set(range(9)) and base.causal.all()


@pytest.mark.slow  # the packaged model's passes
def test_perplexity_rows_for_exact_and_every_method(rows) -> None:
    ppl = rows[(rows.kind == "perplexity") & rows.layer.isna() & (rows.metric == "ppl_ratio")]
    assert set(ppl.estimator) == {"exact", "uniform", *METHODS}
    ratio = ppl.set_index("estimator").value
    assert ratio["exact"] == 1 and ratio["uniform"] > 2
    assert ratio["window"] == pytest.approx(1, rel=1e-5)  # 32 keys over 32 tokens: exact
    random = ppl[ppl.estimator == "positive@orf"]
    assert random.n_trials.iloc[0] == 2 and np.isfinite(random.stderr.iloc[0])
    one = rows[(rows.kind == "perplexity") & rows.layer.notna() & (rows.metric == "ppl_ratio")]
    assert set(one.layer) == set(range(30)) and set(one.estimator) == {"uniform", "window"}
