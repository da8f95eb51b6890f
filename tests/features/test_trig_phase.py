"""The random-phase TrigRF (DERF Eqs. 4-5): unbiased, and its variance exceeds the [sin, cos]
map's by ½ e^{‖x‖²+‖y‖²} per feature (a factor-2 error in either moment fails)."""

import numpy as np

from rfbench.compute.features import registry


def _one_feature_estimates(x: np.ndarray, y: np.ndarray, draws: int) -> np.ndarray:
    est = registry.get("trig-phase@iid", kernel="softmax", m=1)
    draw = est.sample(np.random.default_rng(3), x.size, draws=draws)
    return est.estimate(draw, x[None], y[None])[:, 0, 0]


def test_random_phase_trig_is_unbiased_with_the_papers_variance():
    rng = np.random.default_rng(0)
    x, y = 0.4 * rng.standard_normal(5), 0.4 * rng.standard_normal(5)
    k = _one_feature_estimates(x, y, 200_000)
    sm = np.exp(x @ y)
    assert abs(k.mean() - sm) < 4 * k.std() / np.sqrt(k.size)
    z2 = np.sum((x - y) ** 2)
    # E[(f(x) f(y))²] = e^{‖x‖²+‖y‖²} (½(1 + e^{-2‖z‖²}) + ½): cos² of ωᵀz plus the phase's ½
    second = np.exp(x @ x + y @ y) * (0.5 * (1 + np.exp(-2 * z2)) + 0.5)
    se = np.std(k**2) / np.sqrt(k.size)
    assert abs(np.mean(k**2) - second) < 4 * se
    assert np.mean(k**2) > 1.2 * np.exp(x @ x + y @ y) * 0.5 * (1 + np.exp(-2 * z2))


def test_orthogonal_random_phase_trig_has_one_feature_per_projection():
    est = registry.get("trig-phase@orf", kernel="gaussian", m=12)
    assert est.features_per_projection == 1
    x = np.random.default_rng(1).standard_normal((4, 6)) * 0.3
    draw = est.sample(np.random.default_rng(2), 6, draws=3)
    assert est.query_log_features(draw, x).values.shape == (3, 4, 12)
