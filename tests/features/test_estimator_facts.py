"""The estimator answers for itself what ``registry.describe`` says of its name, and its feature
count is the real width of its map (a complex entry counts twice)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.features import registry
from rfbench.compute.runner.core import feature_counts


def _built(name: str):
    desc = registry.describe(name)
    return desc, registry.get(name, kernel=desc.kernels[0], m=4)


@pytest.mark.parametrize("name", registry.estimator_names())
def test_estimator_facts_match_its_description(name: str) -> None:
    desc, est = _built(name)
    kind = ("hybrid" if desc.hybrid else "component") if desc.kind == "alias" else desc.kind
    assert est.kind == kind
    assert est.data_dependent == desc.data_dependent
    assert est.bipolar == desc.bipolar
    assert est.precision_form == desc.precision_form
    assert est.projection_terms == desc.projection_terms
    if est.weights is not None:  # estimators without a coupling (Nyström) name none
        assert est.weights_name == desc.weights


@pytest.mark.parametrize(
    ("name", "per_projection"),
    [("trig@iid", 2), ("positive@iid", 1), ("hyperbolic@orf", 2), ("complex-exp@iid", 2)],
)
def test_feature_width_counts_real_entries(name: str, per_projection: int) -> None:
    m, d = 8, 5
    est = registry.get(name, kernel="softmax", m=m)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3, d)) * 0.3
    draw = est.sample(rng, d=d, draws=2)
    assert est.feature_width(draw, X) == per_projection * m
    phi = est.query_features(draw, X)
    assert est.feature_width(draw, X) == phi.shape[-1] * (2 if np.iscomplexobj(phi) else 1)
    # the one feature count: the estimator's, the runner's column in every result file (and
    # the attention budget's projections) agree with the width of the map itself
    assert est.features_per_projection * m == est.feature_width(draw, X)
    rows = pd.DataFrame({"estimator": [name], "m": [m]})
    assert int(feature_counts(rows).iloc[0]) == est.feature_width(draw, X)
