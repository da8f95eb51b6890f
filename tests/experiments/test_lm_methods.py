"""The lm experiment's attention methods on grouped-query heads, against dense computations, and
the passkey prompt (docs/experiments.md#language-model)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from rfbench.compute.checks import UserError
from rfbench.compute.experiments.attention.lm import data, passkey
from rfbench.compute.experiments.attention.lm.methods import (
    Method,
    attention,
    only_in,
    uniform_attention,
    visible_window,
)
from rfbench.compute.experiments.attention.metrics import _real_maps
from rfbench.compute.models.llama import causal_softmax, exact_attention

T, D = 20, 8


def _qkv(seed: int = 0):
    rng = np.random.default_rng(seed)
    return (0.5 * rng.normal(size=(6, T, D)), 0.5 * rng.normal(size=(2, T, D)),
            rng.normal(size=(2, T, D)))  # fmt: skip


def test_a_feature_map_shares_one_draw_per_key_value_head() -> None:
    q, k, v = _qkv()
    method = Method("positive@orf", 16)
    out = attention(method, 7, None)(3, q, k, v)
    est = method.estimator()
    for h in range(6):
        g = h // 3  # 3 query heads per key/value head
        gen = np.random.default_rng([7, zlib.crc32(b"positive@orf"), 3, g])
        draw = est.sample(gen, d=D, draws=1)
        fq, fk = est.query_log_features(draw, q[h]), est.key_log_features(draw, k[g])
        phi, psi = _real_maps(fq.values[0], fk.values[0])
        a = (phi @ psi.T) * np.exp(fq.log_scale[0][:, None] + fk.log_scale[0][None]) * np.tri(T)
        np.testing.assert_allclose(out[h], (a / a.sum(1, keepdims=True)) @ v[g], rtol=1e-9)


def test_uniform_is_the_running_mean_of_each_key_value_head() -> None:
    q, k, v = _qkv()
    out = uniform_attention(0, q, k, v)
    for h in range(6):
        np.testing.assert_allclose(out[h], np.cumsum(v[h // 3], 0) / np.arange(1, T + 1)[:, None])


def test_window_keeps_the_sinks_and_the_most_recent_keys() -> None:
    mask = visible_window(T, 6, 2)
    for i in range(T):
        seen = set(np.flatnonzero(mask[i]))
        assert seen == ({0, 1} | set(range(max(0, i - 3), i + 1))) & set(range(i + 1))
        assert len(seen) <= 6  # the same keys per row as a window of 6
    assert not mask[np.triu_indices(T, 1)].any()


@pytest.mark.parametrize("name", ["window", "top-k", "window+positive@orf"])
def test_local_methods_covering_every_key_are_exact(name: str) -> None:
    q, k, v = _qkv()
    keys = 2 * T if name.startswith("window+") else T  # a hybrid's window is half its budget
    out = attention(Method(name, keys + (4 if name.startswith("window+") else 0), 2), 1, None)(
        0, q, k, v
    )
    np.testing.assert_allclose(out, causal_softmax(q, k, v), rtol=1e-9, atol=1e-12)


def test_window_with_sinks_is_softmax_over_its_keys() -> None:
    q, k, v = _qkv()
    out = attention(Method("window", 6, 2), 1, None)(0, q, k, v)
    np.testing.assert_allclose(out, causal_softmax(q, k, v, visible_window(T, 6, 2)))
    assert not np.allclose(out, causal_softmax(q, k, v))


def test_only_in_swaps_one_layer() -> None:
    q, k, v = _qkv()
    one = only_in(uniform_attention, 2)
    np.testing.assert_array_equal(one(2, q, k, v), uniform_attention(2, q, k, v))
    np.testing.assert_array_equal(one(1, q, k, v), exact_attention(1, q, k, v))


@pytest.mark.parametrize(
    ("name", "features", "sinks", "why"),
    [("hedgehog", 1, 0, "at least 2 features"), ("window", 4, 4, "the sinks"),
     ("window+positive@orf", 1, 0, "at least 2 features"),
     ("window+hedgehog", 2, 0, "at least 3 features")],
)  # fmt: skip
def test_a_budget_a_method_cannot_have_is_named(name, features, sinks, why) -> None:
    assert why in Method(name, features, sinks).check()


def _encode(text: str) -> np.ndarray:  # a stand-in tokenizer: one id per character
    return np.frombuffer(text.encode(), dtype=np.uint8).astype(np.int64)


def test_passkey_prompt_has_the_length_and_ends_with_its_answer() -> None:
    p = passkey.make(_encode, 600, np.random.default_rng(3))
    assert len(p.ids) == 600
    assert bytes(p.ids[-p.answer :].astype(np.uint8)).decode() == f" {p.key}"
    text = bytes(p.ids.astype(np.uint8)).decode()
    assert text.count(str(p.key)) == 3  # planted twice, answered once
    again = passkey.make(_encode, 600, np.random.default_rng(3))
    np.testing.assert_array_equal(p.ids, again.ids)
    depths = {passkey.make(_encode, 600, np.random.default_rng(s)).depth for s in range(8)}
    assert len(depths) > 1  # the depth is drawn


def test_a_passkey_length_too_short_is_a_user_error() -> None:
    with pytest.raises(UserError, match="at least"):
        passkey.make(_encode, 50, np.random.default_rng(0))


def test_recalled_reads_the_predictions_before_each_answer_token() -> None:
    p = passkey.make(_encode, 300, np.random.default_rng(1))
    argmax = np.roll(p.ids, -1)  # a model that always predicts the next token
    assert passkey.recalled(argmax, p).all()
    argmax[-3] = -1
    assert passkey.recalled(argmax, p).sum() == p.answer - 1


def test_fits_interleave_the_group_within_each_fitting_sequence(monkeypatch) -> None:
    q, k, _ = _qkv()  # 6 query heads sharing 2 key/value heads; two sequences of 11 and 9
    monkeypatch.setattr(data, "fit_qk", lambda *a: (q, k, np.array([11, T - 11])))
    fits = data.Fits("any", 0, 11)
    qs, ks = fits.sequences(layer=1, g=1)
    assert [len(x) for x in qs] == [11, T - 11] and [len(x) for x in ks] == [11, T - 11]
    for start, seq_q, seq_k in zip((0, 11), qs, ks, strict=True):
        i = np.arange(len(seq_q))  # row i: query head 3 + (i mod 3) at position i of its sequence
        np.testing.assert_array_equal(seq_q, q[3 + i % 3, start + i])
        np.testing.assert_array_equal(seq_k, k[1, start : start + len(seq_k)])
    cloud_q, cloud_k = fits.data(1, 1)
    np.testing.assert_array_equal(cloud_q, np.concatenate(qs))
    np.testing.assert_array_equal(cloud_k, k[1])
