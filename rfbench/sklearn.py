"""A scikit-learn transformer over the estimator library: ``fit`` draws, ``transform`` applies.

>>> from rfbench.sklearn import RandomFeatures
>>> rf = RandomFeatures("hyperbolic@orf", n_components=256, kernel="gaussian", random_state=0)
>>> Z = rf.fit_transform(X)            # query-side features φ(x)
>>> Zk = rf.transform_key(Y)           # key-side features ψ(y); K̂(X, Y) = Z @ Zk.T

``n_components`` is the number of random projections m (docs/architecture.md#estimator-contract),
not the output width: a trig or hyperbolic map has 2m columns (``n_features_out_``). For asymmetric
estimators (aderf, saderf, complex-exp, hybrids, SGQ's signed weights) the key side differs from the
query side; use ``transform_key``. Complex features are returned as real arrays [Re φ, Im φ] (query)
and
[Re ψ, -Im ψ] (key), so that the real dot product equals Re(φᵀψ), the estimate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from rfbench.features import registry


class RandomFeatures(TransformerMixin, BaseEstimator):
    """Random features of any registered estimator (``rfbench list estimators``)."""

    def __init__(
        self,
        estimator: str = "hyperbolic@orf",
        n_components: int = 256,
        kernel: str = "softmax",
        n: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.estimator = estimator
        self.n_components = n_components
        self.kernel = kernel
        self.n = n
        self.random_state = random_state

    def _generator(self) -> np.random.Generator:
        if isinstance(self.random_state, np.random.RandomState):
            return np.random.default_rng(self.random_state.randint(0, 2**31 - 1))
        return np.random.default_rng(self.random_state)

    def fit(self, X: Any, y: Any = None) -> RandomFeatures:
        """Draw the random projections for inputs of X's width (and fit data-dependent parts)."""
        X = validate_data(self, X, dtype=np.float64)
        extra = {} if self.n is None else {"n": self.n}
        self.estimator_ = registry.get(
            self.estimator, kernel=self.kernel, m=self.n_components, **extra
        )
        self.draw_ = self.estimator_.sample(self._generator(), d=X.shape[1], draws=1, fit=(X, X))
        self.n_features_out_ = self._transform(X[:1], key=False).shape[1]
        return self

    def _transform(self, X: np.ndarray, key: bool) -> np.ndarray:
        side = self.estimator_.key_features if key else self.estimator_.query_features
        Z = side(self.draw_, X)[0]
        if np.iscomplexobj(Z):
            Z = np.concatenate([Z.real, -Z.imag if key else Z.imag], axis=1)
        return Z

    def transform(self, X: Any) -> np.ndarray:
        """Query-side features φ(X), shape (n_samples, n_features_out_)."""
        check_is_fitted(self, "draw_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._transform(X, key=False)

    def transform_key(self, X: Any) -> np.ndarray:
        """Key-side features ψ(X): K̂(x, y) = transform(x) · transform_key(y)."""
        check_is_fitted(self, "draw_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._transform(X, key=True)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        check_is_fitted(self, "draw_")
        name = self.estimator.replace("@", "_").replace("-", "_")
        return np.asarray([f"{name}{i}" for i in range(self.n_features_out_)], dtype=object)
