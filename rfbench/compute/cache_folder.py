"""rfbench's folder of derived files (activations, converted models, fitted maps)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """rfbench's folder of derived files: ``$RFBENCH_CACHE``, else the per-user cache folder
    (never ``$RFBENCH_DATA``, which holds the user's raw data)."""
    root = os.environ.get("RFBENCH_CACHE")
    if root:
        return Path(root).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("rfbench"))
