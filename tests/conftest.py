"""Shared fixtures: the data folder (the real files, else the synthetic fixtures) and generators.

``data_dir`` is the real data folder when there is one (``RFBENCH_DATA``, else ../shared/data
beside the checkout), otherwise ``tests/fixtures/data``: small synthetic files in every raw
format the loaders read, whose checksums replace the registry's pins for the session. So every
loader and parser runs on a fresh clone; ``RFBENCH_TEST_DATA=fixtures`` forces the fixtures.
Tests of the papers' published numbers take ``real_data_dir`` and skip without the real files.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from data_facts import EXAMPLE_PLUGIN, FIXTURE_DATA, real_data

#: where a test session's per-user files go instead of the user's home: caches (activations,
#: fitted maps, converted models), logs, matplotlib's and Chromium's profiles
_HOME_VARIABLES = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME",
                   "RFBENCH_CACHE", "RFBENCH_LOG_DIR", "MPLCONFIGDIR")  # fmt: skip
_session_home: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    """Point HOME, the XDG folders, rfbench's cache and log folders and matplotlib's at one
    temporary folder per test process (removed at the end), before any test module is imported:
    the tests write nothing into the user's ``~/.cache/rfbench`` or ``~/.config``. The data
    folder ``RFBENCH_DATA`` is kept (the real files are read, never written)."""
    global _session_home
    _session_home = Path(tempfile.mkdtemp(prefix="rfbench-tests-home-"))
    for name in _HOME_VARIABLES:
        folder = _session_home / name.lower()
        folder.mkdir()
        os.environ[name] = str(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _session_home is not None:
        shutil.rmtree(_session_home, ignore_errors=True)


def _pin_fixtures() -> None:
    """Point the registry's pins at the fixture files (checksums from PINS.toml)."""
    import rfbench.compute.datasets as D

    pins = tomllib.loads((FIXTURE_DATA / "PINS.toml").read_text())
    for name, info in list(D.DATASETS.items()):
        variants = {
            key: tuple(
                replace(f, sha256=pins[f.path]["sha256"], size=pins[f.path]["size"])
                if f.path in pins
                else f
                for f in files
            )
            for key, files in info.variants.items()
        }
        D.DATASETS[name] = replace(info, variants=variants)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The folder holding the raw data files: the real ones if present, else the fixtures."""
    real = real_data()
    if real is not None:
        return real
    _pin_fixtures()
    return FIXTURE_DATA


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The real data folder, for checks against the papers' numbers; skip without it."""
    real = real_data()
    if real is None:
        pytest.skip("published-number check: needs the real data files (set RFBENCH_DATA)")
    return real


@pytest.fixture
def plugin_module(isolated_registry, monkeypatch):
    """The example plugin's module imported from the source tree (its registrations undone
    afterwards)."""
    import importlib

    monkeypatch.syspath_prepend(str(EXAMPLE_PLUGIN))
    return importlib.import_module("rfbench_example_plugin.gerf_fixed")


@pytest.fixture
def isolated_registry(monkeypatch, tmp_path):
    """Estimator tables and plugin state restored after the test; ``tmp_path`` importable.

    Modules the test imports whose name starts with ``rfb_test_`` or ``rfbench_example_plugin``
    are forgotten afterwards, so their registrations do not leak into other tests.
    """
    from rfbench.compute import plugins
    from rfbench.compute.experiments import list_experiments
    from rfbench.compute.features import registry, theory
    from rfbench.present.plots import list_figures
    from rfbench.present.summaries import presentations

    registry.estimator_names()  # the built-ins are in before the copies are taken
    theory.has_theory("trig@iid"), list_experiments(), list_figures(), presentations()
    saved = plugins.snapshot()
    monkeypatch.setattr(plugins, "_loaded", None)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    plugins.restore(saved)
    for name in list(sys.modules):
        if name.startswith(("rfb_test_", "rfbench_example_plugin")):
            del sys.modules[name]


@pytest.fixture(autouse=True)
def _one_commands_memory_budget():
    """``--max-memory`` holds for one command; a command a test invokes in this process must not
    leave its budget to the next test's readers (rfbench.compute.memlimits.set_requested)."""
    from rfbench.compute import memlimits

    yield
    memlimits.set_requested(None)
