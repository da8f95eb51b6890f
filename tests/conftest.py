"""Shared fixtures: the offline data folder and deterministic generators."""

from __future__ import annotations

import os
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
