"""Plugins cannot hijack or silence the suite (issue 32): a plugin that raises anything on import
(``SystemExit`` and ``KeyboardInterrupt`` included) is reported and left unloaded, and no plugin
can take a name a built-in or another plugin holds (experiment, figure, component, weights,
hybrid, alias, closed form, presentation)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from rfbench.compute import plugins

COMPONENT = """
from rfbench.compute.features.components import Positive
from rfbench.compute.features.registry import register_component


@register_component
class Copy(Positive):
    name = "rfb-test-copy"
"""

EXPERIMENT = """
from rfbench.compute.experiments import Experiment, register_experiment
from rfbench.compute.experiments.params import ExperimentParams


class {cls}Params(ExperimentParams):
    samples: int = 3


@register_experiment
class {cls}(Experiment):
    name = "{name}"
    description = "a plugin experiment"
    params = {cls}Params

    def grid(self, config):
        return []

    def run_job(self, spec, rng):
        return []
"""

FIGURE = """
from rfbench.present.plots import register_figure


@register_figure("{name}", needs=["{name}"], title="a plugin's figure")
def draw(results):
    raise AssertionError("never drawn")
"""


def _plugins(monkeypatch, root: Path, sources: dict[str, str]) -> None:
    """Entry points ``<name>`` -> module ``rfb_test_<name>`` holding ``sources[name]``."""
    eps = []
    for name, source in sources.items():
        (root / f"rfb_test_{name}.py").write_text(source)
        eps.append(EntryPoint(name, f"rfb_test_{name}", plugins.ENTRY_POINT_GROUP))
    monkeypatch.setattr(plugins, "entry_points", lambda group: eps)


def _warning(caplog) -> str:
    (record,) = [r for r in caplog.records if r.name == "rfbench.plugins"]
    text = record.getMessage()
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    "raised", ["SystemExit(0)", "SystemExit(3)", "KeyboardInterrupt()", "GeneratorExit()"]
)
def test_a_plugin_raising_any_base_exception_is_reported_and_undone(
    isolated_registry, monkeypatch, caplog, raised
) -> None:
    from rfbench.compute.features import registry

    _plugins(monkeypatch, isolated_registry, {"quits": COMPONENT + f"\nraise {raised}\n"})
    with caplog.at_level(logging.WARNING, logger="rfbench.plugins"):
        assert plugins.load_plugins() == []
    text = _warning(caplog)
    assert "'quits'" in text and "rfb_test_quits" in text and raised.split("(")[0] in text
    assert not any(n.startswith("rfb-test-copy") for n in registry.estimator_names())


def test_a_real_ctrl_c_while_plugins_load_still_stops(isolated_registry, monkeypatch) -> None:
    """SIGINT delivered during a plugin's import is the user's, not the plugin's: it propagates
    (the command then ends with status 130, rfbench.entry)."""
    source = "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n"
    _plugins(monkeypatch, isolated_registry, {"slow": source})
    # as from a terminal, even when the suite runs as a background job (SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            plugins.load_plugins()
    finally:
        signal.signal(signal.SIGINT, previous)


CLASHES = {
    "experiment": (EXPERIMENT.format(cls="Gram", name="gram"), "rfbench.compute.experiments.gram"),
    "figure": (FIGURE.format(name="hrf-fig2"), "rfbench.present.plots.hrf_pointwise"),
    "weights": (
        "from rfbench.compute.features.registry import register_weights\n"
        "from rfbench.compute.features.weights.mc import IID\n\n"
        "@register_weights\nclass ORF(IID):\n    name = 'orf'\n",
        "rfbench.compute.features.weights",
    ),
    "alias": (  # an alias may not take a component's name either
        "from rfbench.compute.features.registry import register_alias\n"
        "register_alias('trig', 'positive@iid')\n",
        "rfbench.compute.features.components",
    ),
    "closed form": (
        "from rfbench.compute.features.theory import register_theory\n\n"
        "@register_theory('trig@iid')\ndef zero(est, x, y):\n    return 0 * x[..., 0]\n",
        "rfbench.compute.features.theory",
    ),
    "presentation": (
        "from rfbench.present.summaries import register_presentation\n\n"
        "@register_presentation('gram')\ndef summary(results):\n    return results\n",
        "rfbench.present.summaries.gram",
    ),
}


@pytest.mark.parametrize("kind", list(CLASHES))
def test_a_plugin_cannot_take_a_builtin_name(isolated_registry, monkeypatch, caplog, kind) -> None:
    """Same name, different class or function: refused, one line naming the plugin and the
    built-in it would replace; the built-in stays."""
    from rfbench.compute.experiments import EXPERIMENTS
    from rfbench.compute.features import registry, theory
    from rfbench.present.plots.registry import FIGURES

    before = (EXPERIMENTS["gram"], FIGURES["hrf-fig2"], theory.FORMULAS["trig@iid"])
    before_orf = registry.weights_samplers()["orf"]
    source, builtin = CLASHES[kind]
    _plugins(monkeypatch, isolated_registry, {"evil": source})
    with caplog.at_level(logging.WARNING, logger="rfbench.plugins"):
        assert plugins.load_plugins() == []
    text = _warning(caplog)
    assert "plugin 'evil' (rfb_test_evil." in text and f"built-in {builtin}" in text, text
    assert (EXPERIMENTS["gram"], FIGURES["hrf-fig2"], theory.FORMULAS["trig@iid"]) == before
    assert registry.weights_samplers()["orf"] is before_orf
    assert registry.describe("trig").estimator.kind == "component"


REGISTRY = """
from rfbench.compute.plugins import BuiltinsThenPlugins, claim, tracked

THINGS = tracked({})


def register_thing(name, origin):
    claim(THINGS, "thing", name, origin, origin)


def load_builtins():
    register_thing("built-in", "rfbench.things.BuiltIn")


_load = BuiltinsThenPlugins(load_builtins)
register_thing("at-import", "rfbench.things.AtImport")  # as a built-in module imported first
"""


def test_a_registry_a_plugin_imports_first_loads_its_builtins_before_the_plugins_names(
    isolated_registry, monkeypatch, caplog
) -> None:
    """A registry announces itself to the loader when imported (the loader names none): one that
    a plugin imports first has its built-ins in before the plugin's first name, and they stay
    when the plugin is taken back."""
    monkeypatch.setattr(plugins, "_REGISTRIES", list(plugins._REGISTRIES))
    monkeypatch.setattr(plugins, "_TABLES", list(plugins._TABLES))
    (isolated_registry / "rfb_test_things.py").write_text(REGISTRY)
    source = (
        "from rfb_test_things import register_thing\n"
        "register_thing('mine', 'rfb_test_late.Mine')\n"
        "register_thing('built-in', 'rfb_test_late.Evil')\n"
    )
    _plugins(monkeypatch, isolated_registry, {"late": source})
    with caplog.at_level(logging.WARNING, logger="rfbench.plugins"):
        assert plugins.load_plugins() == []
    assert (
        "thing 'built-in' is already registered by built-in rfbench.things.BuiltIn; "
        "plugin 'late' (rfb_test_late.Evil) cannot take it"
    ) in _warning(caplog)
    from rfb_test_things import THINGS

    assert THINGS == {"built-in": "rfbench.things.BuiltIn", "at-import": "rfbench.things.AtImport"}
    assert plugins._OWNERS[("thing", "at-import")][2] == "built-in rfbench.things.AtImport"
    assert ("thing", "mine") not in plugins._OWNERS


def test_two_plugins_cannot_share_a_name(isolated_registry, monkeypatch, caplog) -> None:
    from rfbench.compute.experiments import get_experiment

    _plugins(
        monkeypatch,
        isolated_registry,
        {
            "first": EXPERIMENT.format(cls="Mine", name="rfb-test-shared"),
            "second": EXPERIMENT.format(cls="Mine", name="rfb-test-shared"),
        },
    )
    with caplog.at_level(logging.WARNING, logger="rfbench.plugins"):
        assert plugins.load_plugins() == ["first"]
    text = _warning(caplog)
    assert "plugin 'second' (rfb_test_second.Mine)" in text
    assert "plugin 'first' (rfb_test_first.Mine)" in text
    assert type(get_experiment("rfb-test-shared")).__module__ == "rfb_test_first"


def _install(site: Path, name: str, source: str) -> dict[str, str]:
    """A plugin distribution in ``site`` (a dist-info with the entry point, and its module), as
    pip would install it; the environment of a command that sees it."""
    info = site / f"rfb_test_{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: rfb-test-{name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[rfbench.plugins]\n{name} = rfb_test_{name}\n")
    (site / f"rfb_test_{name}.py").write_text(source)
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "COLUMNS": "200"}


CLI = [sys.executable, "-c", "from rfbench.entry import main; main()"]


@pytest.mark.slow  # a real process
def test_a_plugin_exiting_zero_does_not_silence_the_command(tmp_path) -> None:
    """Before: every command exited 0 with no output. Now the command runs, with one warning."""
    env = _install(tmp_path / "site", "quits", "raise SystemExit(0)\n")
    done = subprocess.run([*CLI, "list", "experiments"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "gram" in done.stdout, done
    (line,) = [x for x in done.stderr.splitlines() if "plugin" in x]
    assert "'quits'" in line and "rfb_test_quits" in line and "SystemExit" in line


@pytest.mark.slow  # real processes
def test_builtins_are_in_before_any_plugin_whatever_loads_first(tmp_path) -> None:
    """A plugin imported by the estimator registry (before any figure or experiment module) still
    cannot take a figure or experiment name: the built-ins of every registry load first."""
    source = EXPERIMENT.format(cls="Gram", name="gram") + FIGURE.format(name="hrf-fig2")
    env = _install(tmp_path / "site", "evil", source)
    probe = (
        "from rfbench.compute.features import registry; registry.estimator_names()\n"
        "from rfbench.compute.experiments import get_experiment\n"
        "from rfbench.present.plots import FIGURES, list_figures; list_figures()\n"
        "print(type(get_experiment('gram')).__module__, FIGURES['hrf-fig2'].draw.__module__)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "rfbench.compute.experiments.gram.experiment",
        "rfbench.present.plots.hrf_pointwise",
    ]
    (line,) = [x for x in done.stderr.splitlines() if "plugin" in x]
    assert "'evil'" in line and "already registered by built-in" in line
