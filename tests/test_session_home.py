"""Issue 39: the tests write nothing outside their temporary folders. The session points HOME,
the XDG folders, rfbench's cache and log folders and matplotlib's at a temporary folder
(tests/conftest.py) and keeps the data folder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import platformdirs

from rfbench.compute.models.files import cache_root


def _inside_temp(path: str | Path) -> bool:
    return Path(path).resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())


def test_per_user_folders_are_temporary() -> None:
    for name in ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "RFBENCH_CACHE", "RFBENCH_LOG_DIR"):
        assert _inside_temp(os.environ[name]), name
    assert _inside_temp(Path("~").expanduser())
    assert _inside_temp(cache_root()) and _inside_temp(platformdirs.user_cache_dir("rfbench"))
    assert _inside_temp(platformdirs.user_config_dir("chromium"))
    assert _inside_temp(platformdirs.user_log_dir("rfbench"))
