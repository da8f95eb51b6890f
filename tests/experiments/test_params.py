"""Parameters declared once (rfbench.compute.experiments.params): each experiment's model is the one
declaration its defaults, help, validation and CLI options come from, and a bad value is one
line naming the key, the value and what is expected."""

from __future__ import annotations

import copy
import pickle
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from rfbench.compute.experiments import ConfigError, Experiment, ResolvedConfig, list_experiments
from rfbench.compute.experiments.params import ExperimentParams, Listed, Values, describe

BUILT_IN = [e for e in list_experiments() if type(e).__module__.startswith("rfbench.")]


def test_every_built_in_experiment_declares_its_parameters_in_its_package() -> None:
    assert len(BUILT_IN) >= 10
    for exp in BUILT_IN:
        package = type(exp).__module__.rsplit(".", 1)[0]
        assert exp.params.__module__.rsplit(".", 1)[0] == package, exp.name  # params or experiment
        assert issubclass(exp.params, ExperimentParams), exp.name
        assert exp.params.model_config["extra"] == "forbid"
        fields = exp.parameters()
        assert list(fields) == list(exp.params.model_fields)
        assert all(p.help for p in fields.values()), exp.name  # every parameter has help
        for profile in ("quick", "paper"):  # the profiles and the defaults validate
            exp.resolve_config({}, profile)


def test_lists_of_distinct_defaults_reject_repeats_and_others_allow_them() -> None:
    """The rule the ``defaults`` dictionaries of earlier releases implied, kept: a list whose
    default values are distinct is a list of distinct values (``subset = [0, 0]`` is two
    sizes)."""
    for exp in BUILT_IN:
        for p in exp.parameters().values():
            if p.many:
                assert p.distinct == (len(set(map(repr, p.default))) == len(p.default)), p.key


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("pointwise", {"projection_budget": [64, 64]},
         "invalid value for 'projection_budget': 64 is listed twice (each"),
        ("pointwise", {"angles": 1}, "invalid value for 'angles': 1 (allowed: an integer >= 2)"),
        ("pointwise", {"samples": "many"}, "'samples': 'many' (allowed: an integer)"),
        ("pointwise", {"samples": 2.0}, "'samples': 2.0 (allowed: an integer)"),
        ("pointwise", {"flop_match": 1}, "'flop_match': 1 (allowed: true or false)"),
        ("pointwise", {"kernel": "laplace"}, "'kernel': 'laplace' (allowed: softmax, gaussian)"),
        ("pointwise", {"r": []}, "'r': [] (allowed: a non-empty list)"),
        ("pointwise", {"r": [1.0, -1.0]}, "'r': -1.0 (allowed: a number > 0)"),
        ("pointwise", {"sigma": float("inf")}, "'sigma': inf (allowed: a finite number)"),
        ("pointwise", {"zz": 1, "aa": 2}, "unknown parameter(s) 'aa', 'zz' for experiment "
                                          "'pointwise' (allowed: estimators, projection_budget,"),
        ("gram", {"sigma": [float("nan")]}, "'sigma': nan (allowed: a finite number)"),
        ("gram", {"m_per_d": [0.0, 1.0]}, "'m_per_d': [0.0, 1.0] (allowed: 0, or positive"),
        ("classify", {"trials_by_dataset": {"wine": 0}, "dataset": ["wine"]},
         "'trials_by_dataset': {'wine': 0} (allowed: an integer >= 1)"),
        ("classify", {"subset": [10]}, "'subset': [10] (allowed: a list of 2 values)"),
        ("classify", {"dtype": "float16"}, "'dtype': 'float16' (allowed: auto, float32, float64)"),
        ("variance", {"power": 3}, "'power': 3 (allowed: an integer from 1 to 2)"),
        ("variance", {"power": True}, "'power': True (allowed: an integer)"),
        ("variance", {"mc_samples": 1}, "'mc_samples': 1 (allowed: 0 or an integer >= 2)"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_key_value_and_expectation(name, params, message) -> None:
    from rfbench.compute.experiments import get_experiment

    with pytest.raises(ConfigError) as info:
        get_experiment(name).resolve_config(params)
    text = str(info.value)
    assert message in text and "\n" not in text, text


def test_values_are_typed_as_toml_writes_them() -> None:
    from rfbench.compute.experiments import get_experiment

    config = get_experiment("pointwise").resolve_config(
        {"r": 2, "projection_budget": 64, "sigma": 3}
    )
    assert config["r"] == [2.0] and isinstance(config["r"][0], float)  # a scalar is a list of one
    assert config["projection_budget"] == [64]
    assert config["sigma"] == 3.0 and isinstance(config["sigma"], float)


def test_introspection_reads_the_json_schema() -> None:
    """Kinds, bounds, lengths, choices and tables as ``model_json_schema()`` states them."""

    class Model(ExperimentParams):
        xs: Values[Annotated[float, Field(gt=0)]] = Field([1.0], min_length=1, description="x")
        sizes: Listed[int] = Field([0, 0], min_length=2, max_length=2)
        k: Literal["a", "b"] = "a"
        n: int = Field(3, ge=1, le=5, json_schema_extra={"rule": "1 to 5"})
        t: dict[str, int] = {}
        anything: Any = None

    fields = describe(Model)
    assert fields["xs"].help == "x" and fields["xs"].kind == "float" and fields["xs"].distinct
    assert fields["xs"].bounds == ((">", 0),) and fields["xs"].constraint == "each > 0; non-empty"
    assert not fields["sizes"].distinct and fields["sizes"].length() == "2 values"
    assert fields["k"].choices == ("a", "b") and fields["k"].kind == "str"
    assert fields["n"].bounds == ((">=", 1), ("<=", 5)) and fields["n"].constraint == "1 to 5"
    assert fields["t"].type_name == "table[str, int]" and fields["anything"].kind == "any"


def test_defaults_and_help_dictionaries_are_refused() -> None:
    """``params`` is the one declaration: the dictionaries of earlier releases are an error."""
    with pytest.raises(TypeError, match="declare its parameters in a params model"):

        class Old(Experiment):
            name = "old"
            defaults = {"a": 1}

    class Model(ExperimentParams):
        a: int = 1

    class Once(Experiment):
        name = "once"
        params = Model

    assert {k: p.default for k, p in Once.parameters().items()} == {"a": 1}
    assert issubclass(Once.params, BaseModel)


def test_a_resolved_config_is_read_only_and_passes_unvalidated(monkeypatch) -> None:
    from rfbench.compute.experiments import get_experiment

    exp = get_experiment("theory")
    config = exp.resolve_config({}, "quick")
    assert isinstance(config, ResolvedConfig) and isinstance(config, dict)
    with pytest.raises(TypeError, match="read-only"):
        config["hrf_m"] = 3
    with pytest.raises(TypeError, match="read-only"):
        config.update(hrf_m=3)
    for copied in (pickle.loads(pickle.dumps(config)), copy.deepcopy(config)):
        assert type(copied) is ResolvedConfig and copied == config

    calls = []
    monkeypatch.setattr(type(exp), "validate_config", lambda self, c: calls.append(c))
    assert exp.check_config(config) is config and not calls  # already resolved: as it is
    again = exp.check_config({**config, "hrf_m": 3})  # a changed copy is validated again
    assert again["hrf_m"] == 3 and len(calls) == 1
