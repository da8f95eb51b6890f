"""What the job cache keys on besides the job: a digest of the code that computes it.

:func:`code_digest` is the SHA-256 of every ``.py`` and ``.toml`` file under ``rfbench/compute/``,
the computing layer (docs/architecture.md#layout), computed once per process; :func:`environment`
adds the numpy and scipy versions and :func:`code_tag` names the cache folder of that environment.
An experiment class defined outside the package (a plugin, a test) adds the digest of its own
source files (:func:`external_sources`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

import rfbench
from rfbench.compute.experiments.base import ConfigError
from rfbench.compute.seeding import canonical_json

PACKAGE_DIR = Path(rfbench.__file__).resolve().parent
#: the computing layer: every file under it is part of a job's key
COMPUTE_DIR = PACKAGE_DIR / "compute"
SOURCE_SUFFIXES = (".py", ".toml")


def _digest_files(paths: Iterable[Path], root: Path | None = None) -> str:
    """SHA-256 over (relative path, size, content) of the files, in sorted order."""
    sha = hashlib.sha256()
    named = sorted((p.relative_to(root).as_posix() if root else str(p), p) for p in paths)
    for name, path in named:
        data = path.read_bytes()
        sha.update(f"{name}\0{len(data)}\0".encode())
        sha.update(data)
    return sha.hexdigest()


def source_files(root: Path) -> list[Path]:
    """The .py and .toml files under ``root``."""
    return [
        p
        for p in root.rglob("*")
        if p.suffix in SOURCE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts
    ]


@functools.cache
def code_digest() -> str:
    """SHA-256 of the computing layer's source files (``rfbench/compute/``)."""
    return _digest_files(source_files(COMPUTE_DIR), PACKAGE_DIR)


def _plugin_files(module_name: str) -> list[Path]:
    """The source files of a plugin: its whole top-level package, or its lone module."""
    top = importlib.import_module(module_name.split(".")[0])
    roots = [Path(p) for p in getattr(top, "__path__", [])]
    if not roots:
        return [Path(inspect.getsourcefile(top) or "")]
    return [p for root in roots for p in source_files(root)]


@functools.cache
def plugin_info() -> tuple[dict[str, str], ...]:
    """Every loaded ``rfbench.plugins`` entry point: name, module, distribution, version,
    and the SHA-256 of its package's source (so editing a plugin's estimator recomputes its
    jobs)."""
    from importlib.metadata import entry_points

    from rfbench.compute.plugins import ENTRY_POINT_GROUP, load_plugins

    loaded = set(load_plugins())
    found = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name not in loaded:
            continue
        files = [f for f in _plugin_files(ep.module) if f.is_file()]
        found.append({
            "name": ep.name,
            "module": ep.value,
            "distribution": ep.dist.name if ep.dist else "",
            "version": ep.dist.version if ep.dist else "",
            "source_sha256": _digest_files(files, Path(os.path.commonpath(files)).parent)
            if files
            else "",
        })  # fmt: skip
    return tuple(found)


@functools.cache
def environment() -> dict[str, str]:
    """The code digest with the numpy and scipy versions (both change floating-point results),
    and a digest of the installed plugins' sources when any is loaded."""
    import scipy

    env = {"code": code_digest(), "numpy": np.__version__, "scipy": scipy.__version__}
    plugins = plugin_info()
    if plugins:
        env["plugins"] = hashlib.sha256(canonical_json(list(plugins)).encode()).hexdigest()
    return env


def code_tag() -> str:
    """16 hex digits naming :func:`environment`: the cache folder of the current code."""
    return hashlib.sha256(canonical_json(environment()).encode()).hexdigest()[:16]


def external_sources(cls: type) -> str | None:
    """Digest of the source files of ``cls`` and its bases defined outside rfbench, or None."""
    files = set()
    for base in cls.__mro__:
        try:
            path = Path(inspect.getsourcefile(base) or "").resolve()
        except TypeError:  # built-in classes (object) have no source file
            continue
        if path.is_file() and PACKAGE_DIR not in path.parents:
            files.add(path)
    return _digest_files(files) if files else None


def check_workers(client: Any) -> None:
    """Raise :class:`ConfigError` if a connected Dask worker runs other code than this process.

    Its rows would be cached under this process's digest. Workers that join later are not checked.
    """
    here = environment()
    for worker, env in client.run(environment).items():
        if env != here:
            diff = ", ".join(f"{k} {env.get(k, '?')[:12]} here {v[:12]}" for k, v in here.items())
            raise ConfigError(
                f"dask worker {worker} runs other code than this client ({diff}): install the "
                "same rfbench, numpy and scipy on every worker"
            )
