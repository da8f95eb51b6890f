import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

from rfbench.compute.kernels import kernel_matrix
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
    rf = RandomFeatures(name, n_components=4096, kernel="gaussian", gamma=0.5, random_state=1)
    rf.fit(X)
    K_hat = rf.transform(X) @ rf.transform_key(X).T
    K = kernel_matrix("gaussian", X, X)  # exp(-‖x − y‖²/2): gamma = 1/2
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


@pytest.mark.parametrize(("name", "per_projection"), [("trig@orf", 2), ("positive@iid", 1)])
def test_the_output_width_is_stated(name, per_projection):
    X = np.random.default_rng(0).normal(size=(6, 5))
    rf = RandomFeatures(name, n_components=64, random_state=0).fit(X)
    width = 64 * per_projection
    assert rf.n_features_out_ == width and rf.transform(X).shape == (6, width)
    names = rf.get_feature_names_out()
    assert len(names) == width and len(set(names)) == width


def test_gamma_sets_the_bandwidth():
    """gamma = γ estimates exp(-γ‖x − y‖²): at γ = 2 the estimate of exp(-2‖x − y‖²), not of the
    unit kernel (a factor-2 error in the scaling moves the kernel by far more than 5 SE)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 4)) * 0.3
    rf = RandomFeatures("trig@iid", n_components=8192, kernel="gaussian", gamma=2.0,
                        random_state=0).fit(X)  # fmt: skip
    K_hat = rf.transform(X) @ rf.transform_key(X).T
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    assert np.max(np.abs(K_hat - np.exp(-2.0 * sq))) < 5 / np.sqrt(8192)
    assert np.max(np.abs(np.exp(-2.0 * sq) - np.exp(-4.0 * sq))) > 10 / np.sqrt(8192)


@pytest.mark.slow
def test_raw_digits_work_with_the_default_bandwidth():
    """SVC's gamma='scale' rule makes raw pixel values (0..16) usable: ≥ 0.9 held-out accuracy."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import RidgeClassifier
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    model = make_pipeline(
        RandomFeatures("trig@orf", n_components=512, kernel="gaussian", random_state=0),
        RidgeClassifier(alpha=1e-3),
    )
    assert model.fit(Xtr, ytr).score(Xte, yte) >= 0.9


def test_features_that_underflow_warn():
    X = np.random.default_rng(0).normal(size=(20, 8)) * 30
    rf = RandomFeatures("positive@iid", n_components=32, kernel="gaussian", gamma=50.0)
    with pytest.warns(RuntimeWarning, match="choose a smaller gamma"):
        rf.fit(X).transform(X)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_a_bad_n_components_is_named_as_n_components(bad):
    """Issue 39: ``n_components=0`` was reported as ``m`` (the registry's name for it)."""
    with pytest.raises(ValueError, match=r"^n_components must be a positive integer"):
        RandomFeatures("trig@iid", n_components=bad).fit(np.ones((4, 3)))
