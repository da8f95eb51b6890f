"""A broken --model folder is one line and exit 2 naming the file and the field, before any job
(tiny synthetic BERT folders, tests/tiny_bert.py)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tiny_bert
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute import models

SMALL = ("--tokens", 32, "--budget", 4, "--draws", 2, "--estimators", "positive@iid",
         "--swap-budget", 4, "--swap-sentences", 3, "--swap-trials", 1,
         "--swap-tokens", 8)  # fmt: skip
RUN = ("--backend", "serial", "--quiet", "--no-plot")


def invoke(*args: object):
    return CliRunner().invoke(app, [*map(str, args), *RUN])


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path / "data"))


def _config(**changes) -> Callable[[Path], None]:
    return lambda f: tiny_bert.make_model(f, config=tiny_bert.config_json(**changes))


def _tensor(name: str, value: Callable[[np.ndarray], np.ndarray]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        w = tiny_bert.weights()
        w[name] = value(w[name])
        tiny_bert.make_model(folder, tensors=w)

    return build


def _tokenizer(edit: Callable[[dict], None]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        tok = tiny_bert.tokenizer_json()
        edit(tok)
        tiny_bert.make_model(folder, tokenizer=tok)

    return build


def _empty_header(folder: Path) -> None:
    tiny_bert.make_model(folder)
    (folder / "model.safetensors").write_bytes((2).to_bytes(8, "little") + b"{}")


def _weights_bytes(edit: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        tiny_bert.make_model(folder)
        path = folder / "model.safetensors"
        path.write_bytes(edit(path.read_bytes()))

    return build


def _small_vocab(folder: Path) -> None:
    w = tiny_bert.weights(vocab=50)
    tiny_bert.make_model(folder, config=tiny_bert.config_json(vocab_size=50), tensors=w)


def _no_unk(tok: dict) -> None:
    del tok["model"]["vocab"]["[UNK]"]
    tok["added_tokens"] = [t for t in tok["added_tokens"] if t["content"] != "[UNK]"]


def _zero_tokens(tok: dict) -> None:
    tok["normalizer"] = {"type": "Replace", "pattern": {"Regex": "[\\s\\S]"}, "content": ""}
    tok["post_processor"] = None


def _panics(tok: dict) -> None:
    # the template names a special token the processor does not define: a Rust panic on encode
    tok["post_processor"]["special_tokens"] = {}


def _special(kind: str) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        tiny_bert.make_model(folder)
        (folder / "config.json").unlink()
        if kind == "fifo":
            os.mkfifo(folder / "config.json")
        else:
            (folder / "config.json").symlink_to("/dev/zero")

    return build


CASES = {
    "hidden 1e9": (_config(hidden_size=10**9), ["config.json", "hidden_size = 1000000000"]),
    "layers 1e9": (_config(num_hidden_layers=10**9), ["config.json", "num_hidden_layers"]),
    "layers 10^100": (
        _config(num_hidden_layers=10**100),
        ["num_hidden_layers = 1000000000", "from 1 to 2147483647"],
    ),
    "heads true": (_config(num_attention_heads=True), ["num_attention_heads = True"]),
    "heads -4": (_config(num_attention_heads=-4), ["config.json", "num_attention_heads = -4"]),
    "heads 5": (_config(num_attention_heads=5), ["num_attention_heads = 5 does not divide"]),
    "eps nan": (_config(layer_norm_eps=float("nan")), ["config.json", "layer_norm_eps = nan"]),
    "eps negative": (_config(layer_norm_eps=-1e-12), ["config.json", "layer_norm_eps"]),
    "act relu": (_config(hidden_act="relu"), ["config.json", "hidden_act"]),
    "nan weights": (
        _tensor("encoder.layer.1.attention.self.key.weight", lambda w: w * np.nan),
        ["model.safetensors", "encoder.layer.1.attention.self.key.weight", "NaN"],
    ),
    "int32 weights": (
        _tensor("embeddings.LayerNorm.bias", lambda w: w.astype(np.int32)),
        ["model.safetensors", "embeddings.LayerNorm.bias", "dtype I32"],
    ),
    "wrong shape": (
        _tensor("encoder.layer.0.attention.self.query.weight", lambda w: w[:, :7]),
        ["model.safetensors", "attention.self.query.weight", "[8, 7]", "hidden_size = 8"],
    ),
    "small vocabulary": (_small_vocab, ["tokenizer.json", "vocab_size = 50"]),
    "empty header": (_empty_header, ["model.safetensors", "empty"]),
    "4-byte weights": (_weights_bytes(lambda b: b[:4]), ["model.safetensors", "4 bytes"]),
    "header too long": (
        _weights_bytes(lambda b: (10**9).to_bytes(8, "little") + b[8:]),
        ["model.safetensors", "1000000000-byte header"],
    ),
    "truncated data": (_weights_bytes(lambda b: b[:-8]), ["model.safetensors", "the file holds"]),
    "header not JSON": (
        _weights_bytes(lambda b: b[:8] + b"!" + b[9:]),
        ["model.safetensors", "not JSON"],
    ),
    "no [UNK]": (_tokenizer(_no_unk), ["tokenizer.json", "'[UNK]' is not in its vocabulary"]),
    "zero tokens": (_tokenizer(_zero_tokens), ["tokenizer.json", "zero tokens"]),
    "tokenizer panics": (_tokenizer(_panics), ["tokenizer.json", "panics"]),
    "config /dev/zero": (_special("dev"), ["config.json is a character device"]),
    "config FIFO": (_special("fifo"), ["config.json is a FIFO"]),
    "config 2 MB": (_config(padding="x" * 2**21), ["config.json has", "at most 1048576"]),
}


@pytest.mark.parametrize("case", CASES)
def test_a_broken_model_folder_exits_2_with_one_line_before_any_job(tmp_path: Path, case) -> None:
    build, needles = CASES[case]
    folder = tmp_path / "model"
    build(folder)
    out = tmp_path / "out.parquet"
    one_line_error(invoke("attention", "--model", folder, *SMALL, "--out", out), *needles)
    assert not out.exists() and not (tmp_path / ".rfbench-cache").exists()
    assert not (tmp_path / "data" / "activations").exists()  # nothing computed, nothing cached


def test_minilm_weights_under_a_tiny_config_exit_2(tmp_path: Path) -> None:
    try:
        default, _ = models.model_folder()
    except models.ModelError:
        pytest.skip(f"default model missing: {models.INSTALL}")
    folder = tiny_bert.make_model(tmp_path / "model")
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").symlink_to(default / "model.safetensors")
    res = invoke("attention", "--model", folder, *SMALL, "--out", tmp_path / "o.parquet")
    one_line_error(res, "config.json num_hidden_layers = 2", "model.safetensors holds 6 layers")


def test_a_sparse_huge_weights_file_is_refused_from_its_header_before_hashing(
    tmp_path: Path, monkeypatch
) -> None:
    """A 6 GiB model.safetensors (sparse: no disk) whose header matches its config is sized from
    the header and refused by the memory budget; the file is never hashed or read."""
    from safetensors.numpy import save_file

    rows = 210_000_000  # 210M × 8 float32: 6.3 GiB of word embeddings
    folder = tmp_path / "model"
    tiny_bert.make_model(folder, config=tiny_bert.config_json(vocab_size=rows))
    w = tiny_bert.weights()
    w["embeddings.word_embeddings.weight"] = np.zeros((1, 8), np.float32)
    save_file(w, str(folder / "small.safetensors"))
    raw = (folder / "small.safetensors").read_bytes()
    header = json.loads(raw[8 : 8 + int.from_bytes(raw[:8], "little")])
    header.pop("__metadata__", None)
    word = header["embeddings.word_embeddings.weight"]
    word_end, shift = word["data_offsets"][1], (rows - 1) * 8 * 4
    for entry in header.values():  # the tensors after the word embeddings move by the growth
        if entry["data_offsets"][0] >= word_end:
            entry["data_offsets"] = [x + shift for x in entry["data_offsets"]]
    word["shape"], word["data_offsets"][1] = [rows, 8], word_end + shift
    blob = json.dumps(header).encode()
    data_size = max(e["data_offsets"][1] for e in header.values())
    with (folder / "model.safetensors").open("wb") as fh:
        fh.write(len(blob).to_bytes(8, "little") + blob)
        fh.truncate(8 + len(blob) + data_size)
    assert (folder / "model.safetensors").stat().st_size > 6 * 2**30

    def never(path: Path) -> str:
        raise AssertionError(f"{path} was hashed")

    monkeypatch.setattr(models, "file_sha256", never)
    monkeypatch.setattr(models.files, "file_sha256", never)
    res = invoke("attention", "--model", folder, *SMALL, "--max-memory", "1G",
                 "--out", tmp_path / "o.parquet")  # fmt: skip
    one_line_error(res, "GiB", "budget")


@pytest.mark.slow  # the packaged model's forward pass: not the inner loop
def test_a_local_folder_named_like_the_default_model_is_that_folder(
    tmp_path: Path, monkeypatch
) -> None:
    """An existing path wins over the installed model's name (as in Hugging Face's
    from_pretrained): the run measures the local 2-layer folder, named by its own digest."""
    tiny_bert.make_model(tmp_path / models.DEFAULT_MODEL)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.parquet"
    res = invoke("attention", "--model", models.DEFAULT_MODEL, *SMALL, "--no-swap", "--out", out)
    assert res.exit_code == 0, res.output
    from rfbench.compute.results import load_results

    rows = load_results(out)
    digest = models.model_digest(models.DEFAULT_MODEL)
    assert set(rows["dataset"]) == {f"{models.DEFAULT_MODEL}@{digest[:16]}"}
    assert set(rows["layer"].dropna()) == {0, 1} and set(rows["head"].dropna()) == {0, 1}


@pytest.mark.slow  # the packaged model's forward pass: not the inner loop
def test_layers_default_to_the_models_own_and_are_checked_against_them(tmp_path: Path) -> None:
    folder = tiny_bert.make_model(tmp_path / "model")
    out = tmp_path / "out.parquet"
    res = invoke("attention", "--model", folder, *SMALL, "--layers", "2", "--out", out)
    one_line_error(res, "layers", "0..1")
    res = invoke("attention", "--model", folder, *SMALL, "--no-swap", "--out", out)
    assert res.exit_code == 0, res.output
    from rfbench.compute.results import load_provenance, load_results

    assert set(load_results(out)["layer"].dropna()) == {0, 1}
    assert load_provenance(out)["config"]["layers"] == [0, 1]  # the resolved config says what ran


def test_a_two_layer_copy_of_minilm_runs_without_layers(tmp_path: Path) -> None:
    """Issue 29's new user: MiniLM's first two layers in a folder of their own."""
    from safetensors.numpy import load_file, save_file

    try:
        default, _ = models.model_folder()
    except models.ModelError:
        pytest.skip(f"default model missing: {models.INSTALL}")
    folder = tmp_path / "minilm-2"
    folder.mkdir()
    weights = {k: v for k, v in load_file(str(default / "model.safetensors")).items()
               if not any(f"encoder.layer.{i}." in k for i in range(2, 6))}  # fmt: skip
    save_file(weights, str(folder / "model.safetensors"))
    config = json.loads((default / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 2}))
    shutil.copy(default / "tokenizer.json", folder / "tokenizer.json")
    out = tmp_path / "out.parquet"
    res = invoke("attention", "--model", folder, *SMALL, "--no-swap", "--max-heads", 2,
                 "--out", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    from rfbench.compute.results import load_provenance, load_results

    assert set(load_results(out)["layer"].dropna()) == {0, 1}
    assert load_provenance(out)["config"]["layers"] == [0, 1]  # the resolved config says what ran


def test_a_model_path_that_is_a_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "model").write_text("{}")
    res = invoke("attention", "--model", tmp_path / "model", "--out", tmp_path / "o.parquet")
    one_line_error(res, "is a regular file, not a folder")
