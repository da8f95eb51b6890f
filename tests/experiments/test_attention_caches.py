"""The attention experiment's caches are keyed on everything that shapes a number (issue 32.1):
a model folder's every file and the encoder's code; --force recomputes them; a damaged cache
file is computed again. Tiny synthetic BERT folders (tests/tiny_bert.py) keep it fast."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tiny_bert
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments.attention import swap
from rfbench.compute.results import load_results

SMALL = ("--layers", "0,1", "--tokens", 32, "--budget", 4, "--draws", 2, "--estimators",
         "positive@iid", "--swap-budget", 4, "--swap-sentences", 4, "--swap-trials", 1,
         "--swap-tokens", 8)  # fmt: skip
RUN = ("--backend", "serial", "--quiet", "--no-plot")
KEY = ["kind", "estimator", "metric", "layer", "head", "budget", "rank", "tokens"]


def attention(model: Path, out: Path, cache: Path, *extra: object) -> pd.DataFrame:
    """Rows of a small run of ``model`` into ``out``, with rfbench's cache in ``cache``."""
    res = CliRunner(env={"RFBENCH_CACHE": str(cache)}).invoke(
        app,
        [
            "attention",
            "--model",
            str(model),
            *map(str, SMALL),
            "--out",
            str(out),
            *map(str, extra),
            *RUN,
        ],  # fmt: skip
    )
    assert res.exit_code == 0, res.output
    return load_results(out)


def numbers(rows: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in KEY if c in rows]
    return rows[[*cols, "value"]].sort_values(cols).reset_index(drop=True)


def fresh(model: Path, tmp_path: Path, name: str) -> pd.DataFrame:
    """The truth: the same run with an empty job cache and an empty model cache."""
    return attention(model, tmp_path / name / "out.parquet", tmp_path / name / "cache")


def copy_with(src: Path, dst: Path, name: str, edit) -> Path:
    shutil.copytree(src, dst)
    blob = json.loads((dst / name).read_text())
    edit(blob)
    (dst / name).write_text(json.dumps(blob))
    return dst


def _four_heads(config: dict) -> None:
    config["num_attention_heads"] = 4


def _swap_letters(tok: dict) -> None:
    vocab = tok["model"]["vocab"]
    vocab["g"], vocab["n"] = vocab["n"], vocab["g"]  # "GNU GENERAL PUBLIC …" starts with g


@pytest.mark.slow  # copies of a real model
@pytest.mark.parametrize(("name", "edit"), [("config.json", _four_heads),
                                            ("tokenizer.json", _swap_letters)])  # fmt: skip
@pytest.mark.parametrize("force", [False, True])
def test_an_edited_copy_of_a_model_gives_the_numbers_of_an_empty_cache(
    tmp_path: Path, name: str, edit, force: bool
) -> None:
    """A copy of a folder with the same weights but another config.json (2 → 4 heads) or
    tokenizer.json (two letters' ids swapped), run into the same output folder and model cache
    after the original, gives what it gives from empty caches (with and without --force)."""
    original = tiny_bert.make_model(tmp_path / "a")
    edited = copy_with(original, tmp_path / "b", name, edit)
    out, cache = tmp_path / "runs" / "a.parquet", tmp_path / "cache"
    first = attention(original, out, cache)
    extra = ("--force",) if force else ()
    rows = attention(edited, tmp_path / "runs" / "b.parquet", cache, *extra)
    truth = fresh(edited, tmp_path, "fresh")
    pd.testing.assert_frame_equal(numbers(rows), numbers(truth))
    assert set(rows["dataset"]) == set(truth["dataset"]) != set(first["dataset"])
    if name == "config.json":
        assert set(rows["head"].dropna()) == {0, 1, 2, 3}
    assert not numbers(rows).equals(numbers(first))


@pytest.mark.slow  # the packaged model's forward pass: not the inner loop
def test_force_recomputes_the_cached_activations(tmp_path: Path) -> None:
    """--force computes every cache the run reads again: a cached activations file altered with
    its recorded identity intact is replaced, and the rows are those of an empty cache."""
    model = tiny_bert.make_model(tmp_path / "m")
    out, cache = tmp_path / "runs" / "o.parquet", tmp_path / "cache"
    first = attention(model, out, cache)
    for path in (cache / "activations").glob("*.npz"):
        with np.load(path) as f:
            arrays = {k: f[k] for k in f.files}
        for key in ("q", "embeddings"):
            if key in arrays:
                arrays[key] = 2 * arrays[key]
        np.savez(path, **arrays)
    again = attention(model, out, cache, "--force")
    pd.testing.assert_frame_equal(numbers(again), numbers(first))


@pytest.mark.slow  # the packaged model's forward pass: not the inner loop
def test_a_damaged_activations_file_is_computed_again(tmp_path: Path) -> None:
    """One flipped bit in each cached .npz (today: BadZipFile: Bad CRC-32 on every run)."""
    model = tiny_bert.make_model(tmp_path / "m")
    cache = tmp_path / "cache"
    first = attention(model, tmp_path / "r1" / "o.parquet", cache)
    files = sorted((cache / "activations").glob("*.npz"))
    # the activations of the measured text, the swap-in score's exact embeddings (nothing is
    # fitted: the fitting text is not run)
    assert len(files) == 2
    for path in files:
        blob = bytearray(path.read_bytes())
        blob[len(blob) // 2] ^= 1
        path.write_bytes(bytes(blob))
    swap.clear_cache()  # as a new process: nothing held in memory
    again = attention(model, tmp_path / "r2" / "o.parquet", cache)
    pd.testing.assert_frame_equal(numbers(again), numbers(first))
    for path in files:  # replaced by whole files
        with np.load(path) as f:
            assert all(np.isfinite(f[k]).all() for k in f.files if f[k].dtype.kind == "f")


@pytest.mark.slow  # the packaged model's forward pass: not the inner loop
def test_a_bad_config_sharing_the_weights_leaves_no_cache_behind(tmp_path: Path) -> None:
    """A NaN-eps config is refused before anything is computed, so it cannot poison a cache."""
    model = tiny_bert.make_model(tmp_path / "m")
    bad = copy_with(model, tmp_path / "bad", "config.json",
                    lambda c: c.update(layer_norm_eps=float("nan")))  # fmt: skip
    cache = tmp_path / "cache"
    res = CliRunner(env={"RFBENCH_CACHE": str(cache)}).invoke(
        app,
        [
            "attention",
            "--model",
            str(bad),
            *map(str, SMALL),
            "--out",
            str(tmp_path / "bad.parquet"),
            *RUN,
        ],  # fmt: skip
    )
    assert res.exit_code == 2 and "layer_norm_eps" in res.output
    assert not (cache / "activations").exists()
    rows = attention(model, tmp_path / "runs" / "o.parquet", cache, "--force")
    pd.testing.assert_frame_equal(numbers(rows), numbers(fresh(model, tmp_path, "fresh")))


def test_tokens_beyond_the_models_positions_are_clamped_before_the_memory_estimate(
    tmp_path: Path,
) -> None:
    """--tokens 100000 on a 64-position model is the 64-token run (today: refused for the memory
    of 100000 tokens); its rows say so."""
    model = tiny_bert.make_model(tmp_path / "m")
    rows = attention(model, tmp_path / "o.parquet", tmp_path / "cache", "--tokens", "100000",
                     "--max-memory", "1G", "--no-swap")  # fmt: skip
    assert set(rows["tokens"]) == {64}
    assert rows["note"].str.contains("tokens 100000 clamped to the model's 64 positions").all()


@pytest.mark.slow  # the packaged model's forward pass: not the inner loop
def test_a_cache_path_that_cannot_be_replaced_is_named_with_the_command_that_removes_it(
    tmp_path: Path,
) -> None:
    """A folder where the activations file should be: the run computes without the cache and
    says how to remove it (never a crash)."""
    model = tiny_bert.make_model(tmp_path / "m")
    cache = tmp_path / "cache"
    first = attention(model, tmp_path / "r1" / "o.parquet", cache, "--no-swap")
    files = sorted((cache / "activations").glob("*.npz"))
    assert len(files) == 1  # the activations of the measured text (nothing is fitted)
    path = files[0]
    path.unlink()
    (path / "x").mkdir(parents=True)
    res = CliRunner(env={"RFBENCH_CACHE": str(cache)}).invoke(
        app,
        [
            "attention",
            "--model",
            str(model),
            *map(str, SMALL),
            "--no-swap",
            "--out",
            str(tmp_path / "r2" / "o.parquet"),
            *RUN,
        ],  # fmt: skip
    )
    assert res.exit_code == 0, res.output
    assert res.output.count(f"remove it with: rm -r '{path}'") == 1  # once, not once per job
    pd.testing.assert_frame_equal(numbers(load_results(tmp_path / "r2" / "o.parquet")),
                                  numbers(first))  # fmt: skip


def test_clamped_lengths_keep_one_asked_exactly() -> None:
    from rfbench.compute.experiments.attention.experiment import _clamped

    assert _clamped([100000, 512, 128], 512) == {512: 512, 128: 128}
    assert _clamped([100000, 600], 512) == {512: 100000}


@pytest.mark.slow  # whole-text fitting or a full model pass: not the inner loop
def test_derived_files_go_to_the_cache_never_into_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RFBENCH_DATA holds the user's raw files: a run's activations, exact embeddings and fitted
    maps, and the converted packaged model, are written under RFBENCH_CACHE (before: the
    activations and the converted model went into the data folder)."""
    from rfbench.compute import models

    model = tiny_bert.make_model(tmp_path / "m")
    data, cache = tmp_path / "data", tmp_path / "cache"
    (data / "abalone").mkdir(parents=True)
    (data / "abalone" / "abalone.data").write_text("a user's raw file\n")
    before = sorted(data.rglob("*"))
    args = ["attention", "--model", str(model), "--layers", "0", "--tokens", "32", "--budget",
            "4", "--draws", "2", "--estimators", "positive@iid,hedgehog", "--swap-budget", "4",
            "--swap-sentences", "4", "--swap-trials", "1", "--swap-tokens", "8",
            "--out", str(tmp_path / "o.parquet"), *RUN]  # fmt: skip
    env = {"RFBENCH_DATA": str(data), "RFBENCH_CACHE": str(cache)}
    res = CliRunner(env=env).invoke(app, args)
    assert res.exit_code == 0, res.output
    assert sorted(data.rglob("*")) == before
    # the activations of the fitting and the measured text, the swap-in score's exact embeddings
    assert len(list((cache / "activations").glob("*.npz"))) == 3
    assert len(list((cache / "fitted-maps").glob("hedgehog-*.npz"))) == 2  # the model's 2 heads
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert models.models_dir() == cache / "models"
