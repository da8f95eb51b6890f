"""Options carried by an estimator name (docs/methods.md#options-in-names):
``gerf-fixed(A=-0.25)@orf``, ``trig@simrf-plus(passes=3)``, ``gaussian-hybrid(sigma=0.5)@orf``."""

from __future__ import annotations

import numpy as np
import pytest

from rfbench.compute.checks import UserError
from rfbench.compute.features import registry, theory
from rfbench.compute.features.options import split_outside_brackets
from rfbench.compute.features.theory import equal_norm_pair


def _same_estimates(a, b, d: int = 4) -> None:
    """Two estimators give the same estimates on one shared draw."""
    x, y = equal_norm_pair(1.0, np.linspace(0.0, np.pi, 3), d)
    draw = a.sample(np.random.default_rng(0), d, 3)
    np.testing.assert_array_equal(a.estimate(draw, x[:1], y), b.estimate(draw, x[:1], y))


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("trig@simrf-plus(passes=3)", {"weights_passes": 3}),
        ("gaussian-hybrid(sigma=0.5, radius=2)@orf", {"sigma": 0.5, "radius": 2}),
        ("angular-hybrid(variant=shared-all)@iid", {"variant": "shared-all"}),
    ],
)
def test_options_in_the_name_are_the_keyword_options(name, kwargs) -> None:
    bare = registry.parse_name(name)[0]
    n = 2 if "hybrid" in name else None
    with_name = registry.get(name, m=4, n=n)
    with_kwargs = registry.get(bare, m=4, n=n, **kwargs)
    x, y = equal_norm_pair(1.0, np.linspace(0.0, np.pi, 3), 4)
    draws = [e.sample(np.random.default_rng(7), 4, 3) for e in (with_name, with_kwargs)]
    np.testing.assert_array_equal(
        with_name.estimate(draws[0], x[:1], y), with_kwargs.estimate(draws[1], x[:1], y)
    )
    assert with_name.name == name


def test_the_name_names_the_estimator_and_drops_its_closed_form() -> None:
    """A closed form is of the default options: none is claimed for options set in the name."""
    d = registry.describe("trig@simrf-plus(passes=3)")
    assert d.target == "trig@simrf-plus(passes=3)" and d.coupling == "simrf-plus"
    assert "weights_passes" not in d.options and "weights_code_compat" in d.options
    assert theory.has_theory(registry.describe("gaussian-hybrid@iid").theory_name)
    assert registry.describe("gaussian-hybrid(sigma=0.5)@iid").theory_name is None
    assert registry.describe("angular-hybrid(variant=shared-all)").variant == "shared-all"
    alias = registry.describe("nystrom-kmeans(iters=3)")  # the alias's fixed option stays
    assert alias.target == "nystrom(landmarks=kmeans, iters=3)"


def test_the_example_plugins_A_is_set_by_name(plugin_module) -> None:
    """gerf-fixed's A, which no command line or config could set before."""
    est = registry.get("gerf-fixed(A=-0.25)@orf", m=6)
    assert est.component.A == -0.25 and est.name == "gerf-fixed(A=-0.25)@orf"
    _same_estimates(est, registry.get("gerf-fixed@orf", m=6, A=-0.25))
    assert registry.describe("gerf-fixed(A=-0.25)@orf").options == {}


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("trig(x=1)@iid", "trig takes no option 'x' (its options: none)"),
        ("trig@orf(passes=2)", "weights 'orf' takes no option 'passes'"),
        ("trig@simrf-plus(passes=-1)", "non-negative integer"),
        ("complex-exp(A=0)@iid", "invertible"),
        ("trig(x=)@iid", "is not a value"),
        ("trig(x)@iid", "is not option=value"),
        ("trig(x=1, x=2)@iid", "given twice"),
        ("cse(variant=independent)", "cse fixes variant=shared-all"),
        ("trig(x=1)@iid@orf", "is not name(option=value, ...)@weights"),
    ],
)
def test_bad_options_are_one_line_user_errors(name, needle) -> None:
    with pytest.raises(UserError) as exc:
        registry.describe(name)
        registry.get(name, m=4)
    text = str(exc.value)
    assert needle in text and "\n" not in text and len(text) < 200, text


def test_a_bad_value_is_refused_when_built_too(plugin_module) -> None:
    with pytest.raises(registry.EstimatorOptionError, match="finite A < 1/8, got nan"):
        registry.get("gerf-fixed(A=nan)@iid", m=4)
    with pytest.raises(registry.EstimatorOptionError, match="finite A < 1/8, got 0.5"):
        registry.describe("gerf-fixed(A=0.5)@iid")


def test_lists_split_outside_parentheses() -> None:
    text = "gaussian-hybrid(sigma=0.5, radius=2)@orf, trig@iid,x(v='a,b')"
    assert split_outside_brackets(text) == [
        "gaussian-hybrid(sigma=0.5, radius=2)@orf",
        " trig@iid",
        "x(v='a,b')",
    ]


def test_the_command_line_runs_a_name_with_options(tmp_path, capsys) -> None:
    from rfbench.cli.app import cli
    from rfbench.compute.results import load_results

    out = tmp_path / "pw.parquet"
    args = ["pointwise", "--estimators", "trig@simrf-plus(passes=3), trig@simrf-plus"]
    args += ["--m", "8", "--angles", "3", "--samples", "20", "--d", "4", "--r", "1.0"]
    assert cli([*args, "--out", str(out), "--backend", "serial", "--quiet", "--no-plot"]) == 0
    rows = load_results(out)
    assert set(rows["estimator"]) == {"trig@simrf-plus(passes=3)", "trig@simrf-plus"}
    bad = ["pointwise", "--estimators", "trig@simrf-plus(pases=3)", "--out", str(out)]
    assert cli(bad) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "no option 'pases'" in line and "passes" in line


def test_a_config_file_sets_options_by_name(tmp_path, capsys) -> None:
    from rfbench.cli.app import cli
    from rfbench.compute.results import load_results

    config = tmp_path / "opt.toml"
    config.write_text(
        'experiment = "pointwise"\nname = "opt-demo"\n\n[params]\n'
        'estimators = ["gaussian-hybrid(sigma=0.5)@iid"]\n'
        "r = [1.0]\nm = [8]\nn = 2\nangles = 3\nsamples = 20\nd = 4\n"
    )
    out = tmp_path / "o.parquet"
    assert cli(["run", str(config), "--out", str(out), "--backend", "serial", "--quiet"]) == 0
    rows = load_results(out)
    assert set(rows["estimator"]) == {"gaussian-hybrid(sigma=0.5)@iid"}
    assert "theory_mse" not in set(rows["metric"])  # the closed form is of sigma = 1
    config.write_text(config.read_text().replace("sigma=0.5", "sigma=0.5, sgma=1"))
    assert cli(["run", str(config), "--out", str(out), "--replace"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "no option 'sgma'" in line and "sigma" in line
