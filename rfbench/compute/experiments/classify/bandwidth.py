"""Where a classify σ comes from, and whether it leaves the kernel informative
(docs/experiments.md#classify-sigma).

Without a published σ: scikit-learn's ``SVC(gamma="scale")``, γ = 1/(d · Var X) over the
z-scored training split, i.e. σ = √(2γ) (Gaussian kernel) or √γ (softmax), as
:class:`rfbench.sklearn.RandomFeatures`' default. A σ so large that the nearest training point
carries more than half the kernel mass of the median query (at most ``MAX_QUERIES``) makes the exact
classifier the 1-nearest-neighbour rule, which no random-feature map can follow: we warn (in the
SimRF Fig. 10 search: nursery at σ ≥ 0.91, chess at σ ≥ 0.78). A nearly constant kernel is not
flagged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rfbench.compute.kernels import log_kernel

#: σ provenance values of the ``sigma_rule`` column (docs/experiments.md#classify-sigma)
PUBLISHED, SEARCHED, GAMMA_SCALE, GIVEN, TUNED = (
    "published",
    "searched",
    "gamma-scale",
    "given",
    "tuned",
)
#: the nearest training point's share of a query's kernel mass above which the kernel is
#: "nearly the identity"
NN_SHARE_MAX = 0.5
#: evaluation queries the check looks at (the first ones of the split, itself a permutation)
MAX_QUERIES = 256


def gamma_scale_sigma(X: np.ndarray, kernel: str) -> float:
    """The input scale σ of SVC's ``gamma="scale"`` on training inputs X (n, d).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The training inputs, as the classifier sees them before scaling by σ.
    kernel : {"gaussian", "softmax"}

    Returns
    -------
    float
        √(2γ) for the Gaussian kernel, √γ for softmax, γ = 1/(d·Var(X)) (1 when Var(X) = 0, as in
        scikit-learn).
    """
    var = float(np.var(X))
    gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    return float(np.sqrt(2.0 * gamma if kernel == "gaussian" else gamma))


def degenerate(kernel: str, Xq: np.ndarray, Xtr: np.ndarray, sigma: float) -> float | None:
    """The median query's nearest-training-point share of its kernel mass when it exceeds
    ``NN_SHARE_MAX`` (the kernel is nearly the identity, see the module), else None.

    Parameters
    ----------
    kernel : {"gaussian", "softmax"}
    Xq, Xtr : ndarray of shape (nq, d), (n, d)
        Evaluation queries and training inputs before scaling by σ (only the first
        ``MAX_QUERIES`` queries are used).
    sigma : float
        The input scale.

    Returns
    -------
    float or None
        The share in (1/2, 1], or None.
    """
    lk = log_kernel(kernel, sigma * Xq[:MAX_QUERIES], sigma * Xtr)
    w = np.exp(lk - lk.max(axis=1, keepdims=True))  # each row's largest entry is 1
    share = float(np.median(1.0 / w.sum(axis=1)))
    return share if share > NN_SHARE_MAX else None


def warning_line(kernel: str, problems: Sequence[tuple[str, float, float]], hint: str) -> str:
    """One line for the (data set, σ, share) that :func:`degenerate` flagged (the first three
    named) and a ``hint``, e.g. "the default (--sigma 0) is σ = 0.181 on digits (gamma-scale)"."""
    named = ", ".join(f"σ = {sigma:.3g} on {name} ({100 * share:.0f} %)"
                      for name, sigma, share in problems[:3])  # fmt: skip
    more = f" and {len(problems) - 3} more" if len(problems) > 3 else ""
    return (
        f"rfbench: warning: the {kernel} kernel is nearly the identity at {named}{more} (the "
        "median query's nearest training point carries that share of its kernel mass): random "
        f"features cannot follow it; {hint}"
    )
