"""Statistical checks of an estimator at one pair (x, y): bias and MSE against the closed form.

Used by the test suite for every registered estimator and by ``benchmarks/estimator_table.py``;
a user's new estimator can be checked the same way::

    check = check_pair("my-component@orf", kernel="gaussian", d=6, m=9)
    assert abs(check.z_bias) < 5 and (check.theory_mse is None or abs(check.z_mse) < 5)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rfbench.compute.features import registry, theory
from rfbench.compute.features.theory import equal_norm_pair
from rfbench.compute.kernels import kernel_matrix
from rfbench.compute.stats import standard_error


@dataclass(frozen=True)
class PairCheck:
    """Monte Carlo summary of ``draws`` independent estimates of K(x, y)."""

    name: str
    kernel: str
    draws: int
    true: float
    mean: float
    se_mean: float  # from theory where a closed form exists, else empirical
    mse: float
    se_mse: float  # standard error of the mean squared error (empirical)
    theory_mse: float | None

    @property
    def z_bias(self) -> float:
        """(mean − K) in standard errors (±inf for a biased deterministic rule such as SGQ)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.float64(self.mean - self.true) / self.se_mean)

    @property
    def rel_bias(self) -> float:
        return (self.mean - self.true) / self.true

    @property
    def mse_ratio(self) -> float | None:
        return None if self.theory_mse is None else self.mse / self.theory_mse

    @property
    def z_mse(self) -> float | None:
        """(empirical MSE − theory) in standard errors of the empirical MSE."""
        if self.theory_mse is None:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):  # deterministic maps: SE 0
            return float(np.float64(self.mse - self.theory_mse) / self.se_mse)


def true_value(kernel: str, x: np.ndarray, y: np.ndarray) -> float:
    """K(x, y); the "angular" kernel of sign features is 1 − 2θ/π."""
    if kernel == "angular":
        cos = x @ y / np.sqrt((x @ x) * (y @ y))
        return float(1 - 2 * np.arccos(np.clip(cos, -1, 1)) / np.pi)
    return float(kernel_matrix(kernel, x[None], y[None])[0, 0])


def check_pair(
    name: str,
    kernel: str = "softmax",
    d: int = 6,
    m: int = 9,
    n: int | None = None,
    draws: int = 20_000,
    seed: int = 0,
    r: float = 0.5,
    theta: float = 1.0,
    fit_points: int = 6,
) -> PairCheck:
    """Draw ``draws`` independent estimates of K(x, y), ‖x‖ = ‖y‖ = r at angle θ, in R^d.

    The pair is put in generic position by a fixed random rotation (structured couplings such as
    SORF behave atypically on axis-aligned inputs). Data-dependent estimators are fitted on (x, y)
    plus ``fit_points`` − 1 random points of norm ≈ r on each side (from generators of their own,
    so the pair and the fit data are the same for every name).
    """
    rng = np.random.default_rng(seed)
    x, y = equal_norm_pair(r, theta, d)
    rotation = np.linalg.qr(np.random.default_rng(seed + 2).standard_normal((d, d)))[0]
    x, y = rotation @ x, rotation @ y
    extra = np.random.default_rng(seed + 1).standard_normal((2, fit_points - 1, d)) * r / np.sqrt(d)
    fit = (np.vstack([x, extra[0]]), np.vstack([y, extra[1]]))
    est = registry.get(name, kernel=kernel, m=m, **({} if n is None else {"n": n}))
    draw = est.sample(rng, d=d, draws=draws, fit=fit)
    k = est.estimate(draw, x[None], y[None])[:, 0, 0]
    true = true_value(kernel, x, y)
    sq = (k - true) ** 2
    theory_mse = None
    if theory.has_theory(est.name) and kernel != "angular":
        try:
            theory_mse = float(theory.mse(est, x, y, params=draw.params))
        except NotImplementedError:  # e.g. a hybrid variant without a closed form
            theory_mse = None
    se_mean = np.sqrt(theory_mse / draws) if theory_mse else standard_error(k)
    return PairCheck(
        name=name if registry.describe(name).alias else est.name,
        kernel=kernel,
        draws=draws,
        true=true,
        mean=float(k.mean()),
        se_mean=float(se_mean),
        mse=float(sq.mean()),
        se_mse=float(standard_error(sq)),
        theory_mse=theory_mse,
    )
