"""MSE of trig, positive and hyperbolic features with independent rows (HRF Lemma 2.2, §1.3,
corrected; docs/methods.md#trig, #positive, #hyperbolic), each as exp(log-prefactor) times a bounded
factor so large arguments stay finite; and of positive features with the fitted coupling
(docs/methods.md#fitted-coupling)."""

from __future__ import annotations

import numpy as np

from rfbench.compute.features.base import Estimator
from rfbench.compute.features.theory.registry import register_theory
from rfbench.compute.features.weights.fitted import positive_second_moment
from rfbench.compute.kernels import sq_norms


def _pair_terms(x: np.ndarray, y: np.ndarray):
    return sq_norms(x + y), sq_norms(x - y), np.einsum("...i,...i->...", x, y)


def trig_mse(m: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """HRF Lemma 2.2 (Eq. 7)."""
    z2, delta2, xy = _pair_terms(x, y)
    return np.exp(z2 - 2 * xy - np.log(2 * m)) * (-np.expm1(-delta2)) ** 2


def positive_mse(m: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """HRF Sec. 2.3 with A = I; docs/methods.md#positive [derived]: (1/m) SM² (e^{‖z‖²} - 1)."""
    z2, _, xy = _pair_terms(x, y)
    return np.exp(2 * xy + z2 - np.log(m)) * (-np.expm1(-z2))


def hyperbolic_mse(m: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """HRF Lemma 2.2, f_2·f_3 (the corrected form of docs/methods.md#hyperbolic)."""
    z2, _, xy = _pair_terms(x, y)
    return np.exp(z2 + 2 * xy - np.log(2 * m)) * (-np.expm1(-z2)) ** 2


@register_theory("trig@iid")
def _trig(est: Estimator, x, y):
    return trig_mse(est.m, x, y)


@register_theory("positive@iid")
def _positive(est: Estimator, x, y):
    return positive_mse(est.m, x, y)


@register_theory("hyperbolic@iid")
def _hyperbolic(est: Estimator, x, y):
    return hyperbolic_mse(est.m, x, y)


@register_theory("positive@fitted")
def _positive_fitted(est: Estimator, x: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
    """(E_q[(p/q)² f(ω, x)² f(ω, y)²] − K²)/M."""
    second = np.exp(positive_second_moment(x, y, params["proposal_cov"]))
    return (second - np.exp(2.0 * np.einsum("...i,...i->...", x, y))) / est.m
