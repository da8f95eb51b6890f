"""Bert.embed with a FixedPrefix: the layers below a one-layer swap are computed once per batch
and the embeddings are those of full passes, bit for bit (the per-layer swap-in score reuses
them across its trials)."""

from __future__ import annotations

import numpy as np
import pytest
import tiny_bert

from rfbench.compute.experiments.attention.swap import only_in_layer, uniform_attention
from rfbench.compute.models.bert import Bert, FixedPrefix, exact_attention

LAYERS = 3
TEXTS = ["a cat sat.", "on the mat, twice", "x", "the quick brown fox jumps", "0123 456"]


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> Bert:
    folder = tmp_path_factory.mktemp("tiny") / "model"
    config = tiny_bert.config_json(num_hidden_layers=LAYERS)
    tiny_bert.make_model(folder, config=config, tensors=tiny_bert.weights(layers=LAYERS))
    return Bert(folder, dtype=np.float32)


def counting(calls: list[int]):
    """Exact attention that records the layer of each call."""

    def attend(layer, q, k, v, mask):
        calls.append(layer)
        return exact_attention(layer, q, k, v, mask)

    return attend


@pytest.mark.parametrize("layer", range(LAYERS))
def test_a_prefix_gives_the_embeddings_of_full_passes_bit_for_bit(bert: Bert, layer: int) -> None:
    attend = only_in_layer(uniform_attention, layer)
    full = bert.embed(TEXTS, attend, batch=2)
    prefix = FixedPrefix(layer, exact_attention)
    for _ in range(2):  # the second call reads the stored layers
        np.testing.assert_array_equal(bert.embed(TEXTS, attend, batch=2, prefix=prefix), full)
    # the uniform swap changes the embeddings, so a prefix that ran it in its place would show
    assert not np.array_equal(full, bert.embed(TEXTS, batch=2))


def test_the_prefix_layers_run_once_per_batch_and_the_others_every_call(bert: Bert) -> None:
    prefix_calls: list[int] = []
    calls: list[int] = []
    prefix = FixedPrefix(2, counting(prefix_calls))
    batches = -(-len(TEXTS) // 2)
    for _ in range(3):
        bert.embed(TEXTS, counting(calls), batch=2, prefix=prefix)
    assert sorted(prefix_calls) == sorted([0, 1] * batches)  # once, in the first call
    assert calls == [2] * (3 * batches)  # the swapped layer and above, every call
    assert len(prefix.states) == batches


def test_a_prefix_of_no_layers_is_a_full_pass(bert: Bert) -> None:
    calls: list[int] = []
    bert.embed(TEXTS, counting(calls), batch=8, prefix=FixedPrefix(0, exact_attention))
    assert calls == list(range(LAYERS))


def test_keep_refuses_a_prefix(bert: Bert) -> None:
    ids, mask = bert.tokenize(TEXTS[:2])
    with pytest.raises(ValueError, match="keep"):
        bert.forward(ids, mask, keep=True, prefix=FixedPrefix(1, exact_attention))


def test_the_stored_layers_are_read_only(bert: Bert) -> None:
    prefix = FixedPrefix(1, exact_attention)
    bert.embed(TEXTS[:2], batch=2, prefix=prefix)
    (state,) = prefix.states.values()
    assert not state.flags.writeable
