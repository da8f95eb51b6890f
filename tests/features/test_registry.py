"""The registry surface: discovery, plugins, describe(), uniform option routing."""

from __future__ import annotations

import logging
import pkgutil
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest

import rfbench.compute.features
from rfbench.compute import plugins
from rfbench.compute.features import registry, theory
from rfbench.compute.text import family_of, split_name, weights_of

COMPONENT_MODULE = '''
from rfbench.compute.features.components import Positive
from rfbench.compute.features.registry import register_component


@register_component
class {cls}(Positive):
    """A copy of the positive features under another name (a test component)."""

    name = "{name}"
'''


def test_every_module_of_the_package_is_imported() -> None:
    registry.estimator_names()
    root = Path(rfbench.compute.features.__file__).parent
    for info in pkgutil.walk_packages([str(root)], "rfbench.compute.features."):
        if "theory" not in info.name and not info.name.rsplit(".", 1)[-1].startswith("_"):
            assert info.name in sys.modules, info.name


def test_a_module_dropped_into_a_package_registers_itself(isolated_registry) -> None:
    pkg = isolated_registry / "rfb_test_pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "newfeat.py").write_text(COMPONENT_MODULE.format(cls="New", name="rfb-new"))
    (pkg / "_private.py").write_text("raise RuntimeError('private modules are not imported')")
    names = plugins.import_submodules("rfb_test_pkg")
    assert names == ["rfb_test_pkg.sub", "rfb_test_pkg.sub.newfeat"]
    assert "rfb-new@orf" in registry.estimator_names()
    assert registry.describe("rfb-new@orf").estimator.kind == "component"


def test_plugins_load_once_and_a_broken_one_is_one_warning(
    isolated_registry, monkeypatch, caplog
) -> None:
    (isolated_registry / "rfb_test_good.py").write_text(
        COMPONENT_MODULE.format(cls="G", name="rfb-good")
    )
    (isolated_registry / "rfb_test_bad.py").write_text("import rfb_test_no_such_module\n")
    eps = [
        EntryPoint("good", "rfb_test_good", plugins.ENTRY_POINT_GROUP),
        EntryPoint("bad", "rfb_test_bad", plugins.ENTRY_POINT_GROUP),
    ]
    calls = []

    def fake(group: str):
        calls.append(group)
        return eps

    monkeypatch.setattr(plugins, "entry_points", fake)
    with caplog.at_level(logging.WARNING, logger="rfbench.plugins"):
        assert plugins.load_plugins() == ["good"]
        assert plugins.load_plugins() == ["good"]  # once
    assert calls == [plugins.ENTRY_POINT_GROUP]
    (record,) = caplog.records
    text = record.getMessage()
    assert "'bad'" in text and "rfb_test_bad" in text and "ModuleNotFoundError" in text
    assert "\n" not in text
    est = registry.get("rfb-good@iid", m=4)
    assert est.name == "rfb-good@iid" and est.unbiased


def test_a_plugin_that_fails_half_way_leaves_nothing_registered(
    isolated_registry, monkeypatch, caplog
) -> None:
    (isolated_registry / "rfb_test_half.py").write_text(
        COMPONENT_MODULE.format(cls="H", name="rfb-half") + "\nraise RuntimeError('late')\n"
    )
    ep = EntryPoint("half", "rfb_test_half", plugins.ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [ep])
    with caplog.at_level(logging.WARNING, logger="rfbench.plugins"):
        assert plugins.load_plugins() == []
    assert "skipped" in caplog.records[0].getMessage()
    assert not any(n.startswith("rfb-half") for n in registry.estimator_names())
    with pytest.raises(registry.UnknownEstimatorError):
        registry.get("rfb-half@iid", m=4)


def test_a_name_cannot_be_taken_twice(isolated_registry) -> None:
    (isolated_registry / "rfb_test_dup.py").write_text(
        COMPONENT_MODULE.format(cls="D", name="positive")
    )
    with pytest.raises(ValueError, match="component 'positive' is already registered"):
        __import__("rfb_test_dup")


def test_describe_a_component() -> None:
    d = registry.describe("trig@simrf-plus")
    assert (d.alias, d.component, d.coupling, d.target) == (
        False,
        "trig",
        "simrf-plus",
        "trig@simrf-plus",
    )
    est = d.estimator
    assert est.kind == "component" and est.features_per_projection == 2 and not est.data_dependent
    assert dict(d.options) == {"weights_passes": 5, "weights_code_compat": False}
    assert not theory.has_theory(d.theory_name)  # no closed form for SimRF+
    assert theory.has_theory(registry.describe("trig@simrf").theory_name)
    assert "softmax" in d.kernels and d.paper
    assert registry.describe("aderf@iid").estimator.data_dependent
    assert registry.describe("aderf@iid").options["ridge"] is None
    assert not registry.describe("positive@sorf").estimator.unbiased  # Hadamard rows: not N(0, I)


def test_describe_hybrids_and_aliases() -> None:
    a = registry.describe("angular-hybrid")
    assert (a.alias, a.target, a.coupling, a.variant) == (False, "angular-hybrid@iid", "iid", None)
    est = a.estimator
    assert est.kind == "hybrid" and est.bipolar and est.n == 8 and est.unbiased
    assert "shared-all" in est.variants
    assert theory.has_theory(registry.describe("angular-hybrid@iid").theory_name)
    g = registry.describe("gaussian-hybrid@orf")
    assert {"sigma", "radius", "normalized", "variant"} <= set(g.options)
    assert "shared-all" not in g.estimator.variants
    cse = registry.describe("cse")
    assert (cse.alias, cse.target, cse.variant) == (True, "angular-hybrid@iid", "shared-all")
    assert not cse.estimator.unbiased and cse.estimator.n == cse.estimator.m  # τ_j = ω_j
    assert not theory.has_theory(cse.theory_name or "")
    assert "variant" not in cse.options  # fixed by the alias
    c = registry.describe("cluster-hybrid")
    est = c.estimator
    assert est.kind == "hybrid" and not est.bipolar and est.data_dependent
    assert "clusters" in c.options
    with pytest.raises(registry.UnknownEstimatorError, match="unknown estimator 'nope@iid'"):
        registry.describe("nope@iid")
    with pytest.raises(registry.UnknownEstimatorError):
        registry.describe("trig@nope")


def test_descriptions_agree_with_the_estimators() -> None:
    """The target is the built estimator's name, and the class sized before building
    (:func:`registry.estimator_class`) is the class built."""
    for name in registry.estimator_names():
        d = registry.describe(name)
        est = registry.get(name, kernel=d.kernels[0], m=4)
        assert est.name == d.target or d.alias, name
        assert type(est) is type(d.estimator) is registry.estimator_class(name), name


@pytest.mark.parametrize("name", ["positive@simrf-plus", "angular-hybrid@simrf-plus"])
def test_weights_options_route_the_same_way_for_every_kind(name) -> None:
    est = registry.get(name, m=6, weights_passes=3)
    assert est.weights.passes == 3 and est.weights.name == "simrf-plus"
    assert registry.get(name, m=6).weights.passes == 5
    with pytest.raises(TypeError, match="passes2"):
        registry.get(name, m=6, weights_passes2=3)
    with pytest.raises(TypeError, match="weights 'iid' takes no options"):
        registry.get(name.replace("simrf-plus", "iid"), m=6, weights_passes=3)


def test_estimator_n_is_declared() -> None:
    assert registry.get("trig@iid", m=3).n is None
    assert registry.get("angular-hybrid", m=3).n == 8
    assert registry.get("cluster-hybrid", m=3).n is None


def test_name_helpers() -> None:
    assert split_name("trig@orf") == ("trig", "orf") and split_name("cse") == ("cse", None)
    assert weights_of("cse") == "iid" and weights_of("positive@sgq") == "sgq"
    assert family_of("angular-hybrid@orf") == "angular-hybrid" and family_of("cse") == "cse"


def test_positive_int_helpers() -> None:
    from rfbench.compute.checks import is_positive_int, positive_int

    assert all(is_positive_int(v) for v in (1, 3, 3.0, np.int64(2), np.float64(4.0)))
    bad = (0, -1, 2.5, True, np.bool_(True), float("nan"), float("inf"), "3", None)
    assert not any(is_positive_int(v) for v in bad)
    assert positive_int("m", 4.0) == 4 and isinstance(positive_int("m", np.int64(4)), int)
    with pytest.raises(ValueError, match="m must be a positive integer, got 0"):
        positive_int("m", 0)
    with pytest.raises(ValueError, match="m \\(number of projections\\) must be a positive"):
        registry.get("trig@iid", m=2.5)


def test_paper_names() -> None:
    from rfbench.present.reference import PAPER_NAMES, paper_name

    assert paper_name("simrf-plus", "simrf") == "SimRFs+" and paper_name("x@y", "simrf") == "x@y"
    assert list(PAPER_NAMES["derf"])[:3] == ["trig", "trig-sincos", "positive"]  # legend order
    assert paper_name("positive@iid", "hrf-clusters") == "FAVOR+ (= SM⁺)"


EXPERIMENT_MODULE = '''
from rfbench.compute.experiments import Experiment, register_experiment
from rfbench.compute.experiments.params import ExperimentParams


class TinyParams(ExperimentParams):
    samples: int = 3


@register_experiment
class Tiny(Experiment):
    """A plugin's experiment (a test)."""

    name = "rfb-test-tiny"
    description = "a plugin experiment"
    params = TinyParams

    def grid(self, config):
        return []

    def run_job(self, spec, rng):
        return []
'''


def test_a_plugin_experiment_is_listed(isolated_registry, monkeypatch) -> None:
    import rfbench.compute.experiments as experiments

    (isolated_registry / "rfb_test_exp.py").write_text(EXPERIMENT_MODULE)
    ep = EntryPoint("tiny", "rfb_test_exp", plugins.ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [ep])
    monkeypatch.setattr(experiments, "EXPERIMENTS", dict(experiments.EXPERIMENTS))
    monkeypatch.setattr(experiments._load, "loaded", False)
    assert "rfb-test-tiny" in [e.name for e in experiments.list_experiments()]
    assert experiments.get_experiment("rfb-test-tiny").description == "a plugin experiment"


def test_declared_capabilities_match_the_estimators() -> None:
    """An estimator reports a capability exactly when it implements it; the
    float64 reduced-precision form is the estimator's own feature map (HRF Eq. 2-3, DERF Thm 4.1,
    HRF Lemma 2.3), and a missing form raises instead of guessing."""
    rng = np.random.default_rng(5)
    X, Y = 0.4 * rng.standard_normal((3, 4)), 0.4 * rng.standard_normal((2, 4))
    names = [n for n in registry.estimator_names() if n.endswith("@iid") or "@" not in n]
    assert registry.get("trig@iid").precision_form
    assert not registry.get("gaussian-hybrid@iid").precision_form
    for name in names:
        if "softmax" not in registry.describe(name).kernels:
            continue
        est = registry.get(name, m=4, n=3 if registry.estimator_class(name).bipolar else None)
        draw = est.sample(rng, 4, 2, fit=(X, Y))
        maps = []
        for side, Z in (("query", X), ("key", Y)):
            if not est.precision_form:
                with pytest.raises(NotImplementedError):
                    est.dtype_parts(draw, Z, side, np.float64, {})
                continue
            p = est.dtype_parts(draw, Z, side, np.float64, {})
            assert not p.positive or np.all(p.factor >= 0), name
            maps.append(p.factor * np.exp(p.exponent))
        if maps:  # the feature order may differ from the log-space map's; the estimate may not
            k_hat = maps[0] @ np.swapaxes(maps[1], -1, -2)
            np.testing.assert_allclose(k_hat, est.estimate(draw, X, Y), rtol=1e-10, err_msg=name)
        if not est.projection_terms:
            with pytest.raises(NotImplementedError):
                est.projection_log_terms(next(iter(draw.projections.values())), X, "query", {})
