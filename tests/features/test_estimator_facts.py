"""The estimator answers for itself: each of its facts has one definition site, which the
registry's description of a name and a hybrid's entry never copy; a name is resolved and built
once; its feature count is the real width of its map (a complex entry counts twice)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.experiments import shared
from rfbench.compute.features import registry
from rfbench.compute.features.base import Estimator
from rfbench.compute.features.estimator import ComponentEstimator
from rfbench.compute.features.hybrid import HybridBase
from rfbench.compute.runner.core import feature_counts


def _estimator_facts() -> set[str]:
    """Every attribute, property and method the estimator contract declares at class level."""
    return {a for cls in (Estimator, ComponentEstimator) for a in dir(cls) if not a.startswith("_")}


@pytest.mark.parametrize("holder", [registry.EstimatorDescription, registry.HybridEntry])
def test_no_registry_record_repeats_a_fact_of_the_estimator(holder: type) -> None:
    """A fact the estimator declares (``unbiased``, ``bipolar``, ``kind``, ``weights``, …) is read
    from it (``describe(name).estimator``), never held a second time beside it."""
    fields = {f.name for f in dataclasses.fields(holder)} - {"estimator"}
    assert not fields & _estimator_facts()


@pytest.mark.parametrize("name", registry.estimator_names())
def test_the_description_holds_the_estimator_of_its_name(name: str) -> None:
    desc = registry.describe(name)
    est = registry.get(name, kernel=desc.kernels[0], m=4)
    assert type(desc.estimator) is type(est)
    assert desc.estimator.kernel == desc.kernels[0]
    if est.weights is not None:  # estimators without a coupling (Nyström) name none
        assert est.weights_name == desc.coupling


@pytest.mark.parametrize(
    ("name", "m", "n"), [("trig@orf", 64, None), ("angular-hybrid@iid", 8, 8), ("cse", 8, 8)]
)
def test_make_builds_an_estimator_once(monkeypatch, name: str, m: int, n: int | None) -> None:
    """``make`` sizes a bipolar hybrid (m = M // n) before building it, from its class."""
    built: list[str] = []
    for cls in (ComponentEstimator, HybridBase):
        init = cls.__init__

        def counted(self, *args, _init=init, **kwargs) -> None:
            built.append(type(self).__name__)
            _init(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", counted)
    est = shared.make(name, 64, 8)
    assert len(built) == 1 and (est.m, est.n) == (m, n)


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


def test_a_factory_function_hybrid_answers_through_its_estimator(isolated_registry) -> None:
    """``HybridEntry`` takes a factory that is not a class: its estimator is asked, once built."""
    from rfbench.compute.features.hybrid import AngularHybrid

    def factory(**kwargs) -> AngularHybrid:
        return AngularHybrid(**kwargs)

    registry.register_hybrid(
        registry.HybridEntry("rfb-fn-hybrid", factory, ("softmax",), "a test", "angular, by hand")
    )
    desc = registry.describe("rfb-fn-hybrid@orf")
    assert desc.estimator.bipolar and desc.coupling == "orf" and desc.paper == "a test"
    assert registry.estimator_class("rfb-fn-hybrid") is AngularHybrid
    est = shared.make("rfb-fn-hybrid", 64, 8)
    assert (est.m, est.n) == (8, 8)
