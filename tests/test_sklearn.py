import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

from rfbench.kernels import kernel_matrix
from rfbench.sklearn import RandomFeatures

# One of each kind of coupling (iid, Haar, simplex, structured, QMC), a data-dependent component
# and a hybrid, on both kernels: scikit-learn's whole conformance suite on each.
CONFORMANCE = [
    RandomFeatures("trig@iid", n_components=8),
    RandomFeatures("hyperbolic@orf", n_components=16, kernel="gaussian"),
    RandomFeatures("positive@simrf", n_components=8, kernel="gaussian"),
    RandomFeatures("trig@orf-fast", n_components=8),
    RandomFeatures("positive@sobol", n_components=8),
    RandomFeatures("gerf@iid", n_components=8),
    RandomFeatures("angular-hybrid@iid", n_components=4, n=4),
]


@parametrize_with_checks(CONFORMANCE)
def test_sklearn_conformance(estimator, check):
    check(estimator)


def test_check_estimator_names_the_feature_count():
    """A coupling that needs d >= 2 says so in scikit-learn's words ("1 feature(s)")."""
    check_estimator(RandomFeatures("positive@simrf-plus", n_components=4, kernel="gaussian"))


@pytest.mark.parametrize("name", ["trig@orf", "hyperbolic@iid", "positive@simrf"])
def test_features_estimate_the_kernel(name):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 6)) * 0.25
    rf = RandomFeatures(name, n_components=4096, kernel="gaussian", random_state=1).fit(X)
    K_hat = rf.transform(X) @ rf.transform_key(X).T
    K = kernel_matrix("gaussian", X, X)
    # Per-entry MSE of these estimators at norms ≈ 0.6 is below 1/m; 5 SE ≈ 5/√4096 ≈ 0.08.
    assert np.max(np.abs(K_hat - K)) < 0.08
    assert rf.transform(X).shape == (5, rf.n_features_out_)


def test_random_state_determinism():
    X = np.random.default_rng(0).normal(size=(4, 3))
    a = RandomFeatures("trig@orf", 8, random_state=3).fit_transform(X)
    b = RandomFeatures("trig@orf", 8, random_state=3).fit_transform(X)
    c = RandomFeatures("trig@orf", 8, random_state=4).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
