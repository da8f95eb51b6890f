"""rfbench lm end to end on the packaged SmolLM2-135M: bad input is one line, and a small run's
rows are exact where the method is (docs/experiments.md#language-model)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tiny_llama
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments import get_experiment
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run

RUN = ("--backend", "serial", "--quiet")
pytestmark = tiny_llama.needs_packaged_lm


def invoke(*args: object):
    return CliRunner().invoke(app, ["lm", *map(str, args), *RUN])


@pytest.mark.parametrize(
    ("args", "needle"),
    [(("--tokens", 4096, "--sequences", 2), "held-out text GFDL-1.3 has"),
     (("--passkey-lengths", 9000), "8192 positions"),
     (("--passkey-lengths", 40), "a passkey prompt needs at least"),
     (("--estimators", "hedgehog", "--budget", 1), "at least 2 features"),
     (("--estimators", "window", "--budget", 4, "--sinks", 4), "the sinks"),
     (("--layers", 30), "layers 0..29"),
     (("--model", "gpt-5"), "unknown language model")],
)  # fmt: skip
@pytest.mark.slow  # whole-text fitting or a full model pass: not the inner loop
def test_bad_input_is_one_line(args, needle, tmp_path) -> None:
    one_line_error(invoke(*args, "--out", tmp_path / "x.parquet"), needle)


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("lm") / "small.parquet"
    overrides = {"tokens": 32, "sequences": 1, "estimators": ["window", "positive@orf"],
                 "budget": [32], "draws": 2, "per_layer": ["window"], "per_layer_budget": 32,
                 "layers": [3], "fit_tokens": 16, "head_layers": [2], "passkey_lengths": [128],
                 "passkey_trials": 1}  # fmt: skip
    config = get_experiment("lm").resolve_config(overrides, "quick")
    run("lm", config, RunOptions(out=out, backend="serial", quiet=True))
    return load_results(out)


def _value(rows: pd.DataFrame, estimator: str, metric: str, layer=None) -> float:
    sel = rows[(rows.estimator == estimator) & (rows.metric == metric)]
    sel = sel[sel.layer.isna()] if layer is None else sel[sel.layer == layer]
    assert len(sel) == 1, sel
    return float(sel.value.iloc[0])


@pytest.mark.slow  # whole-text fitting or a full model pass: not the inner loop
def test_a_window_over_every_key_is_exact_in_every_layer_and_in_one(rows) -> None:
    for layer in (None, 3):
        assert _value(rows, "window", "ppl_ratio", layer) == pytest.approx(1, rel=1e-5)
        assert _value(rows, "window", "gap_recovered", layer) == pytest.approx(1, abs=1e-3)
    assert _value(rows, "uniform", "ppl_ratio") > 2  # uniform attention in every layer hurts
    assert _value(rows, "uniform", "gap_recovered", 3) == 0


def test_random_rows_have_standard_errors_over_draws(rows) -> None:
    sel = rows[(rows.estimator == "positive@orf") & (rows.metric == "ppl_ratio")]
    assert sel.n_trials.iloc[0] == 2 and np.isfinite(sel.stderr.iloc[0])
    assert "one key-side map per key/value head" in sel.note.iloc[0]
    ppl = _value(rows, "positive@orf", "perplexity")
    exact = _value(rows, "exact", "perplexity")
    assert ppl / exact == pytest.approx(_value(rows, "positive@orf", "ppl_ratio"), rel=0.5)


def test_passkey_rows_for_exact_and_each_method(rows) -> None:
    keys = rows[rows.kind == "passkey"]
    assert set(keys.estimator) == {"exact", "uniform", "window", "positive@orf"}
    assert set(keys.metric) == {"passkey_recall", "passkey_token_accuracy"}
    assert _value(rows, "uniform", "passkey_recall") == 0


def test_head_rows_share_one_draw_per_key_value_head() -> None:
    from rfbench.compute.experiments.attention.lm.heads import GroupFitter
    from rfbench.compute.features import registry

    est = registry.get("positive@orf", kernel="softmax", m=8)
    fitter = GroupFitter(None, 0, 3, 16)  # a data-free map: no fitting text read
    gen = np.random.default_rng(0)
    draws = [fitter.sample(est, gen, h, 4) for h in range(6)]
    assert draws[0] is draws[1] is draws[2] and draws[3] is draws[4] is draws[5]
    w0, w3 = (next(iter(d.projections.values())).W for d in (draws[0], draws[3]))
    assert not np.array_equal(w0, w3)
    again = fitter.sample(est, gen, 0, 4)  # a second request of head 0: a new draw
    assert again is not draws[0]


def test_head_level_causal_rows_for_every_query_head(rows) -> None:
    heads = rows[(rows.kind == "heads") & (rows.metric == "out_rel_frob")]
    assert set(heads["head"]) == set(range(9)) and set(heads["layer"]) == {2}
    assert heads.causal.all() and heads.note.str.contains("one draw per key/value head").all()
    window = heads[heads.estimator == "window"]
    np.testing.assert_allclose(window.value, 0, atol=1e-9)  # 32 keys cover 32 tokens: exact


def test_memory_is_estimated_from_the_config_before_loading() -> None:
    from rfbench.compute.models import lm

    exp = get_experiment("lm")
    config = exp.resolve_config({}, "paper")
    before = lm._load.cache_info().currsize
    need = exp.peak_memory(config)
    assert need > 2 * 4 * 134e6  # the float32 weights, read and cast
    assert lm._load.cache_info().currsize == before  # no weights loaded to say so


def test_a_method_whose_every_pass_breaks_is_one_skipped_row(monkeypatch) -> None:
    from rfbench.compute.experiments import JobSpec
    from rfbench.compute.experiments.attention.lm import runs

    monkeypatch.setattr(runs, "_loss", lambda *a: float("nan"))  # e.g. T2R's zero normaliser
    spec = JobSpec({"model": "smollm2-135m", "tokens": 32, "sequences": 1, "sinks": 4,
                    "draws": 2, "fit_tokens": 16, "kind": "perplexity", "estimator": "positive@orf",
                    "budget": 16, "layer": None})  # fmt: skip
    rows = runs.perplexity_rows(spec, np.random.default_rng(0))
    assert [r["metric"] for r in rows] == ["skipped"]
    assert rows[0]["value"] == 1.0 and "2 of 2 draws gave non-finite outputs" in rows[0]["note"]
