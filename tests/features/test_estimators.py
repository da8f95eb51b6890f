"""Every registered estimator against its own claims, at one pair in generic position.

- ``unbiased`` estimators: |mean − K| < 5 SE (SE from the closed form where one exists), with
  5 SE < K/2 asserted, so a factor-2 error in the estimate cannot pass.
- biased couplings (SORF-type structure, moment matching, sparse-grid quadrature, CSE variant S):
  the bias stays within the 10 % these constructions are documented to reach at d = 6 (Spectraformer
  Sec. 3.3; docs/methods.md#couplings); a factor-2 error cannot pass either.
- wherever ``theory.py`` has the MSE: empirical MSE within 5 standard errors of the closed form,
  with 5 SE < theory/2 asserted (a factor-2 error in the variance cannot pass).
"""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.features import registry, theory
from rfbench.compute.features.validation import check_pair

NAMES = registry.estimator_names()


def _kernel(name: str) -> str:
    return "angular" if name.startswith("sign@") else "softmax"


# A degree-3 sparse-grid rule cannot integrate the discontinuous sign features: it must fail.
MEANINGLESS = {"sign@sgq": "SGQ is exact to degree 3 only; sgn(ωᵀx)sgn(ωᵀy) is discontinuous"}
MEAN_CASES = [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=MEANINGLESS[n]))
    if n in MEANINGLESS
    else n
    for n in NAMES
]


@pytest.mark.parametrize("name", MEAN_CASES)
def test_mean_matches_the_kernel_or_its_documented_bias(name):
    est = registry.get(name, kernel=_kernel(name), m=9)
    check = check_pair(name, kernel=_kernel(name), draws=4_000)
    assert np.isfinite(check.mean)
    if est.unbiased:
        assert 5 * check.se_mean < 0.5 * abs(check.true)
        assert abs(check.z_bias) < 5, (
            f"{name}: bias {check.mean - check.true:.3g} = {check.z_bias:.1f} SE"
        )
    else:
        assert abs(check.rel_bias) < 0.10, f"{name}: relative bias {check.rel_bias:.3f}"


THEORY_NAMES = [n for n in NAMES if theory.has_theory(n)]


@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
@pytest.mark.parametrize("name", THEORY_NAMES)
def test_empirical_mse_matches_theory(name, kernel):
    check = check_pair(name, kernel=kernel, draws=20_000)
    if check.theory_mse is None:  # e.g. the shared-all variant: no closed form by design
        pytest.skip(f"{name} has no closed form in this variant")
    if registry.get(name, kernel=kernel).deterministic:  # MSE = bias², no sampling error
        assert check.mse == pytest.approx(check.theory_mse, rel=1e-8)
        return
    assert 5 * check.se_mse < 0.5 * check.theory_mse
    assert abs(check.z_mse) < 5, (
        f"{name}: MSE/theory = {check.mse_ratio:.3f} ({check.z_mse:.1f} SE)"
    )


def test_every_issue_name_is_registered():
    components = ["trig", "positive", "hyperbolic", "gerf", "aderf", "sderf", "saderf"]
    components += ["complex-exp", "sign"]
    weights = ["iid", "orf", "simrf", "simrf-plus", "sorf", "halton", "sobol", "lattice", "mm"]
    weights += ["fastfood", "scrf", "sgq", "ssf"]
    hybrids = ["angular-hybrid", "gaussian-hybrid", "cluster-hybrid"]
    for name in [f"{c}@{w}" for c in components + hybrids for w in weights] + ["cse"]:
        assert name in NAMES, name


@pytest.mark.parametrize("name", ["trig@orf", "hyperbolic@simrf", "angular-hybrid@iid", "gerf@iid"])
def test_same_seed_same_estimates(name):
    a = check_pair(name, draws=50, seed=3)
    b = check_pair(name, draws=50, seed=3)
    c = check_pair(name, draws=50, seed=4)
    assert a.mean == b.mean and a.mse == b.mse and a.mean != c.mean
