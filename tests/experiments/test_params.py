"""Parameters declared once (rfbench.compute.experiments.params): each experiment's model is the one
declaration its defaults, help, validation and CLI options come from, and a bad value is one
line naming the key, the value and what is expected."""

from __future__ import annotations

import copy
import importlib
import pickle

import pytest
from pydantic import BaseModel

from rfbench.compute.experiments import ConfigError, Experiment, ResolvedConfig, list_experiments
from rfbench.compute.experiments.params import ExperimentParams, describe, model_from_defaults

BUILT_IN = [e for e in list_experiments() if type(e).__module__.startswith("rfbench.")]


def test_every_built_in_experiment_declares_its_parameters_in_its_package() -> None:
    assert len(BUILT_IN) >= 10
    for exp in BUILT_IN:
        package = type(exp).__module__.rsplit(".", 1)[0]
        assert exp.params is importlib.import_module(f"{package}.params").Params, exp.name
        assert exp.params.model_config["extra"] == "forbid"
        fields = exp.parameters()
        assert exp.defaults == {k: p.default for k, p in fields.items()}
        assert exp.help == {k: p.help for k, p in fields.items()}
        assert all(p.help for p in fields.values()), exp.name  # every parameter has help
        for profile in ("quick", "paper"):  # the profiles and the defaults validate
            exp.resolve_config({}, profile)


def test_lists_of_distinct_defaults_reject_repeats_and_others_allow_them() -> None:
    """The rule the ``defaults`` dictionaries implied, kept: a list whose default values are
    distinct is a list of distinct values (``subset = [0, 0]`` is two sizes)."""
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


def test_plain_defaults_still_declare_a_model() -> None:
    """A plugin's ``defaults`` and ``help``: the type of each default is the type of its values."""
    model = model_from_defaults(
        "Toy", {"xs": [1.0, 2.0], "sizes": [0, 0], "k": "a", "n": 3, "t": {}, "any": None},
        {"n": "how many"},
    )  # fmt: skip
    fields = describe(model)
    assert fields["n"].help == "how many" and fields["xs"].kind == "float"
    assert fields["xs"].distinct and not fields["sizes"].distinct
    assert fields["t"].kind == "table" and fields["any"].kind == "any"
    ok = model.model_validate({"xs": 3, "sizes": [1, 1], "t": {"a": 1}, "any": [1]}).model_dump()
    assert ok["xs"] == [3.0] and ok["sizes"] == [1, 1] and ok["any"] == [1]
    for bad in ({"n": True}, {"k": 1}, {"t": 3}, {"xs": [1.0, 1]}, {"nope": 1}):
        with pytest.raises(Exception):  # noqa: B017 - the pydantic error
            model.model_validate(bad)


def test_params_or_defaults_not_both() -> None:
    class Model(ExperimentParams):
        a: int = 1

    with pytest.raises(TypeError, match="declare each parameter once"):

        class Twice(Experiment):
            name = "twice"
            params = Model
            defaults = {"a": 1}

    class Once(Experiment):
        name = "once"
        params = Model

    assert Once.defaults == {"a": 1} and Once.help == {}
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
