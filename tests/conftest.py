"""Shared fixtures: the offline data folder and deterministic generators."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The folder holding the raw data files (RFBENCH_DATA, else ../shared/data); skip if absent."""
    path = Path(os.environ.get("RFBENCH_DATA", SHARED_DATA))
    if not path.is_dir():
        pytest.skip(f"data folder {path} not present (set RFBENCH_DATA)")
    return path


@pytest.fixture
def isolated_registry(monkeypatch, tmp_path):
    """Estimator tables and plugin state restored after the test; ``tmp_path`` importable.

    Modules the test imports whose name starts with ``rfb_test_`` or ``rfbench_example_plugin``
    are forgotten afterwards, so their registrations do not leak into other tests.
    """
    from rfbench import plugins
    from rfbench.features import registry

    registry.estimator_names()  # the built-ins are in before the copies are taken
    for table in ("_COMPONENTS", "_WEIGHTS", "_HYBRIDS", "_ALIASES"):
        monkeypatch.setattr(registry, table, dict(getattr(registry, table)))
    monkeypatch.setattr(plugins, "_loaded", None)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in list(sys.modules):
        if name.startswith(("rfb_test_", "rfbench_example_plugin")):
            del sys.modules[name]
