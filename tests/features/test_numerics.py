"""Log-space features: finite at ‖x‖ = 5; at 100× scalings finite or an explicit error."""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.features import registry
from rfbench.compute.features.base import EstimateRangeError
from rfbench.compute.features.theory import equal_norm_pair

NAMES = [
    f"{c}@orf" for c in ("trig", "positive", "hyperbolic", "gerf", "aderf", "sderf", "saderf")
] + ["complex-exp@iid", "angular-hybrid@iid", "gaussian-hybrid@iid", "cluster-hybrid@iid", "cse"]


def _estimate(name: str, kernel: str, scale: float) -> np.ndarray:
    d = 8
    x, y = equal_norm_pair(5.0, 2.0, d)
    rng = np.random.default_rng(0)
    X = np.vstack([x, rng.standard_normal((3, d))]) * scale
    Y = np.vstack([y, rng.standard_normal((3, d))]) * scale
    est = registry.get(name, kernel=kernel, m=16)
    draw = est.sample(np.random.default_rng(1), d=d, draws=4, fit=(X, Y))
    return est.estimate(draw, X, Y)


@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
@pytest.mark.parametrize("name", NAMES)
def test_norm_five_is_finite(name, kernel):
    K = _estimate(name, kernel, 1.0)
    assert K.shape == (4, 4, 4) and np.all(np.isfinite(K))


@pytest.mark.parametrize("name", NAMES)
def test_scaling_100_gaussian_is_finite(name):
    # ‖x‖ = 500: every feature exp(±ωᵀx ...) overflows without the per-row log shift.
    K = _estimate(name, "gaussian", 100.0)
    assert np.all(np.isfinite(K))


@pytest.mark.parametrize("name", NAMES)
def test_scaling_100_softmax_is_finite_or_an_explicit_error(name):
    # Some SM(x_i, y_j) are e^{±10⁵}: the estimate is a finite float or EstimateRangeError, never
    # a silent inf/nan. Trig features (e^{‖x‖²/2} prefactors) must raise.
    try:
        K = _estimate(name, "softmax", 100.0)
    except EstimateRangeError as exc:
        assert "overflow" in str(exc)
    else:
        assert np.all(np.isfinite(K)) and not name.startswith("trig")
