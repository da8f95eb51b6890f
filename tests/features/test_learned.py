"""Learned feature maps (hedgehog, t2r): the analytic gradient, the fit, the estimator contract."""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.features import learned_fit as lf
from rfbench.compute.features import registry
from rfbench.compute.features.base import Estimator, declares

MAPS = [("hedgehog", lf.hedgehog_map, 0.0), ("t2r", lf.relu_map, 1e-3)]


def _heads(seed: int, t: int = 24, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Anisotropic queries and keys whose attention is far from uniform."""
    rng = np.random.default_rng(seed)
    scale = np.array([2.0, 1.0, 0.5])[:d]
    return rng.standard_normal((t, d)) * scale, rng.standard_normal((t + 5, d)) * scale


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("name", "fmap", "eps"), MAPS)
def test_gradient_matches_central_finite_differences(name, fmap, eps, causal) -> None:
    """Every coordinate of θ (W and b of both sides), at a generic θ: a wrong sign, factor or
    missing term in the backward pass changes some coordinate by far more than 1e-5."""
    Q, K = _heads(1)
    K = K[: len(Q)] if causal else K
    p = 4  # more projections than coordinates: the random extra columns are exercised too
    rng = np.random.default_rng(2)
    theta = lf.initial_theta(rng, 3, p) + 0.3 * rng.standard_normal(2 * (3 + 1) * p)
    target = lf.Target.of(Q, K, causal)
    loss, grad = lf.attention_kl(theta, target, fmap, p, eps)
    h = 1e-6
    numeric = np.array([
        (lf.attention_kl(theta + h * e, target, fmap, p, eps)[0]
         - lf.attention_kl(theta - h * e, target, fmap, p, eps)[0]) / (2 * h)
        for e in np.eye(theta.size)
    ])  # fmt: skip
    assert loss > 0
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8 * np.abs(numeric).max())


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("name", "fmap", "eps"), MAPS)
def test_the_loss_is_the_kl_divergence_of_attention_rows(name, fmap, eps, causal) -> None:
    """Row by row, written out (causal: query i over keys 0..i only)."""
    Q, K = _heads(3)
    K = K[: len(Q)]
    p = 3
    theta = lf.initial_theta(np.random.default_rng(0), 3, p)
    loss, _ = lf.attention_kl(theta, lf.Target.of(Q, K, causal), fmap, p, eps)
    G = fmap(Q)[0] @ fmap(K)[0].T + eps  # W = I, b = 0 at the start
    kl = []
    for i in range(len(Q)):
        seen = slice(0, i + 1) if causal else slice(None)
        a = np.exp(Q[i] @ K[seen].T)
        a /= a.sum()
        a_hat = G[i, seen] / G[i, seen].sum()
        kl.append(np.sum(a * np.log(a / a_hat)))
    assert loss == pytest.approx(np.mean(kl), rel=1e-10)


@pytest.mark.parametrize("name", ["hedgehog", "t2r"])
def test_fit_lowers_the_kl_and_is_deterministic_given_the_seed(name) -> None:
    Q, K = _heads(4)
    est = registry.get(name, m=4)
    d = Q.shape[1]
    state = est.fit_state(np.random.default_rng(7), d, (Q, K))
    again = est.fit_state(np.random.default_rng(7), d, (Q, K))
    other = est.fit_state(np.random.default_rng(8), d, (Q, K))
    for key in state:
        np.testing.assert_array_equal(state[key], again[key])
    assert not np.array_equal(state["Wq"], other["Wq"])  # the columns beyond d come from the seed
    start = lf.attention_kl(
        lf.initial_theta(np.random.default_rng(7), d, 4), lf.Target.of(Q, K), est.fmap, 4,
        est.loss_eps,
    )[0]  # fmt: skip
    assert float(state["loss"]) < 0.5 * start


@pytest.mark.parametrize(("name", "per"), [("hedgehog", 2), ("t2r", 1)])
def test_the_estimator_answers_for_itself(name, per) -> None:
    d = registry.describe(name).estimator
    assert d.features_per_projection == per and d.data_dependent and not d.unbiased
    est = registry.get(name, m=5)
    assert est.deterministic and declares(type(est), "fit_state", Estimator)
    Q, K = _heads(5)
    draw = est.sample(np.random.default_rng(0), 3, draws=2, fit=(Q, K))
    phi, psi = est.query_features(draw, Q), est.key_features(draw, K)
    assert phi.shape == (2, len(Q), 5 * per) and psi.shape == (2, len(K), 5 * per)
    np.testing.assert_allclose(phi @ np.swapaxes(psi, 1, 2), est.estimate(draw, Q, K), rtol=1e-12)
    np.testing.assert_array_equal(phi[0], phi[1])  # every draw is the fitted map
    # the one free constant: the estimate sums to the kernel over the fitting pairs
    assert est.estimate(draw, Q, K)[0].sum() == pytest.approx(np.exp(Q @ K.T).sum(), rel=1e-10)
    with pytest.raises(ValueError, match="fit"):
        est.sample(np.random.default_rng(0), 3)


def test_hedgehog_features_are_the_two_softmaxes() -> None:
    """φ(x) = [softmax(xW + b), softmax(−(xW + b))] (Hedgehog Sec. 4.1), up to the row scale."""
    Q, K = _heads(6)
    est = registry.get("hedgehog", m=3)
    state = est.fit_state(np.random.default_rng(0), 3, (Q, K))
    draw = est.draw_from_state(state, 3, 1)
    phi = est.query_features(draw, Q)[0]
    u = Q @ state["Wq"] + state["bq"]
    want = np.hstack([np.exp(u) / np.exp(u).sum(1, keepdims=True),
                      np.exp(-u) / np.exp(-u).sum(1, keepdims=True)])  # fmt: skip
    np.testing.assert_allclose(phi, want * np.exp(0.5 * float(state["log_scale"])), rtol=1e-12)


def test_a_fitted_map_copies_attention_on_held_out_tokens_better_than_uniform() -> None:
    """Fitted on one sample of a head's tokens, measured on another sample of the same law:
    the rows of linear attention are closer to softmax attention than uniform rows are."""
    Q, K = _heads(7, t=80)
    Qh, Kh = _heads(8, t=80)
    A = np.exp(Qh @ Kh.T)
    A /= A.sum(1, keepdims=True)
    for name in ("hedgehog", "t2r"):
        est = registry.get(name, m=6)
        draw = est.sample(np.random.default_rng(0), 3, fit=(Q, K))
        G = est.estimate(draw, Qh, Kh)[0]
        A_hat = G / G.sum(1, keepdims=True)
        err = np.linalg.norm(A_hat - A) / np.linalg.norm(A)
        uniform = np.linalg.norm(1 / A.shape[1] - A) / np.linalg.norm(A)
        assert err < 0.75 * uniform, name
