"""A scikit-learn transformer over the estimator library: ``fit`` draws, ``transform`` applies.

>>> from rfbench.sklearn import RandomFeatures
>>> rf = RandomFeatures("hyperbolic@orf", n_components=256, kernel="gaussian", random_state=0)
>>> Z = rf.fit_transform(X)            # query-side features φ(x), 256 columns
>>> Zk = rf.transform_key(Y)           # key-side features ψ(y); K̂(X, Y) = Z @ Zk.T

As in scikit-learn's ``RBFSampler``, ``gamma`` is the bandwidth: the Gaussian kernel is
exp(-γ‖x − y‖²) and the softmax kernel exp(γ xᵀy), computed as the library's unit-bandwidth
kernels (docs/methods.md) on √(2γ)·x and √γ·x. ``gamma="scale"`` (the default) is
1 / (d · Var(X)), scikit-learn's ``SVC`` rule, so that γ‖x − y‖² is about 2 on standardised data
whatever its width. Features that underflow or overflow at the chosen γ raise a RuntimeWarning.

Unlike ``RBFSampler``, ``n_components`` is the number of random projections m
(docs/architecture.md#estimator-contract), the papers' budget, not the output width: a
[sin, cos] or [exp(+), exp(−)] map has 2m columns, a hybrid more, a complex map 2m real columns
(``n_features_out_``, ``get_feature_names_out``). For asymmetric estimators (aderf, saderf,
complex-exp, hybrids, SGQ's signed weights) the key side differs from the query side; use
``transform_key``. Complex features are returned as real arrays [Re φ, Im φ] (query) and
[Re ψ, -Im ψ] (key), so that the real dot product equals Re(φᵀψ), the estimate.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from rfbench.compute.features import registry

#: at least this fraction of all-zero (underflowed) feature rows triggers a warning
UNDERFLOW_WARN_FRACTION = 0.5


class RandomFeatures(TransformerMixin, BaseEstimator):
    """Random features of any registered estimator (``rfbench list estimators``).

    Parameters
    ----------
    estimator : str, default="hyperbolic@orf"
        A registry name ``component@weights`` (or a hybrid).
    n_components : int, default=256
        Random projections m; ``transform`` returns ``n_features_out_`` columns (2m for trig).
    kernel : {"softmax", "gaussian"}, default="softmax"
        The kernel estimated: exp(γ xᵀy) or exp(-γ‖x − y‖²).
    gamma : "scale" or float, default="scale"
        Bandwidth; "scale" is 1 / (n_features · X.var()) of the data given to ``fit``.
    n : int or None, default=None
        λ projections of a hybrid estimator (its default when None).
    random_state : int, RandomState or None, default=None
        Seed of the projections.

    Attributes
    ----------
    gamma_ : float
        The bandwidth used.
    n_features_out_ : int
        Output width: columns of ``transform`` (a multiple of ``n_components``).
    """

    def __init__(
        self,
        estimator: str = "hyperbolic@orf",
        n_components: int = 256,
        kernel: str = "softmax",
        gamma: str | float = "scale",
        n: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.estimator = estimator
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.n = n
        self.random_state = random_state

    def _generator(self) -> np.random.Generator:
        if isinstance(self.random_state, np.random.RandomState):
            return np.random.default_rng(self.random_state.randint(0, 2**31 - 1))
        return np.random.default_rng(self.random_state)

    def _build(self, m: int) -> Any:
        extra = {} if self.n is None else {"n": self.n}
        return registry.get(self.estimator, kernel=self.kernel, m=m, **extra)

    def _scale(self, X: np.ndarray) -> float:
        if isinstance(self.gamma, str) and self.gamma == "scale":
            var = float(X.var())
            gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        elif isinstance(self.gamma, Real) and np.isfinite(self.gamma) and self.gamma > 0:
            gamma = float(self.gamma)
        else:
            raise ValueError(f"gamma must be 'scale' or a positive number, got {self.gamma!r}")
        self.gamma_ = gamma
        return float(np.sqrt(2.0 * gamma if self.kernel == "gaussian" else gamma))

    def fit(self, X: Any, y: Any = None) -> RandomFeatures:
        """Choose γ, draw the random projections for inputs of X's width (and fit data-dependent
        parts on X).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : RandomFeatures
        """
        X = validate_data(self, X, dtype=np.float64)
        m = self.n_components
        if not isinstance(m, Integral) or isinstance(m, bool) or m < 1:
            raise ValueError(f"n_components must be a positive integer, got {m!r}")
        self.input_scale_ = self._scale(X)
        X = self.input_scale_ * X
        self.estimator_ = self._build(self.n_components)
        self.draw_ = self.estimator_.sample(self._generator(), d=X.shape[1], draws=1, fit=(X, X))
        self.n_features_out_ = self._transform(X[:1], key=False).shape[1]
        return self

    def _transform(self, X: np.ndarray, key: bool) -> np.ndarray:
        side = self.estimator_.key_features if key else self.estimator_.query_features
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            Z = side(self.draw_, self.input_scale_ * X)[0]
        if np.iscomplexobj(Z):
            Z = np.concatenate([Z.real, -Z.imag if key else Z.imag], axis=1)
        self._warn_if_degenerate(Z)
        return Z

    def _warn_if_degenerate(self, Z: np.ndarray) -> None:
        finite = np.isfinite(Z)
        zero_rows = np.mean(~np.any(Z != 0, axis=1)) if len(Z) else 0.0
        if not finite.all() or zero_rows >= UNDERFLOW_WARN_FRACTION:
            what = "overflow" if not finite.all() else "underflow to zero in most rows"
            warnings.warn(
                f"RandomFeatures({self.estimator!r}): features {what} at gamma={self.gamma_:.3g}; "
                "choose a smaller gamma (or standardise X)",
                RuntimeWarning,
                stacklevel=3,
            )

    def transform(self, X: Any) -> np.ndarray:
        """Query-side features φ(X).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features_out_)
        """
        check_is_fitted(self, "draw_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._transform(X, key=False)

    def transform_key(self, X: Any) -> np.ndarray:
        """Key-side features ψ(X): K̂(x, y) = transform(x) · transform_key(y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features_out_)
        """
        check_is_fitted(self, "draw_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._transform(X, key=True)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """``<estimator>_<i>`` for each output column.

        Returns
        -------
        names : ndarray of str objects, shape (n_features_out_,)
        """
        check_is_fitted(self, "draw_")
        name = self.estimator.replace("@", "_").replace("-", "_")
        return np.asarray([f"{name}_{i}" for i in range(self.n_features_out_)], dtype=object)
