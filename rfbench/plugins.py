"""Discovery of registered components: the package's own modules and other packages' plugins.

Estimators, weights, experiments and figures register themselves when their module is imported
(decorators such as ``register_component`` and ``register_experiment``). The registries import
every module of their package with :func:`import_submodules`, so a module dropped into the
package registers itself, and then call :func:`load_plugins`, which imports each module named by
an entry point of the group ``rfbench.plugins`` of an installed distribution::

    [project.entry-points."rfbench.plugins"]
    my-features = "my_package.rfbench_features"

A plugin that fails to import is skipped with a one-line warning naming it (see
``examples/rfbench-example-plugin`` and ``docs/`` for a worked example), and whatever it had
registered before failing is taken back: every registry hands its tables to :func:`tracked`, and a
failed plugin's import is undone on all of them.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Collection, MutableMapping, MutableSet
from importlib.metadata import entry_points
from typing import TypeVar

ENTRY_POINT_GROUP = "rfbench.plugins"

_log = logging.getLogger("rfbench.plugins")
_loaded: list[str] | None = None
_TABLES: list[MutableMapping | MutableSet] = []
T = TypeVar("T", bound=MutableMapping | MutableSet)


def tracked(table: T) -> T:
    """Declare a registry's table (a dict or set that plugins add to); returns it unchanged."""
    _TABLES.append(table)
    return table


def snapshot() -> list[MutableMapping | MutableSet]:
    """Copies of every tracked registry table (for :func:`restore`)."""
    return [table.copy() for table in _TABLES]  # type: ignore[attr-defined]


def restore(saved: list[MutableMapping | MutableSet]) -> None:
    """Put every tracked table back as :func:`snapshot` found it (in place)."""
    for table, before in zip(_TABLES, saved, strict=False):
        table.clear()
        table.update(before)  # type: ignore[arg-type]


def import_submodules(package: str, skip: Collection[str] = ()) -> list[str]:
    """Import every module of ``package`` and of its subpackages; return their full names.

    Modules whose name starts with ``_`` and the direct submodules named in ``skip`` are left out.
    """
    pkg = importlib.import_module(package)
    names = []
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_") or info.name in skip:
            continue
        full = f"{package}.{info.name}"
        importlib.import_module(full)
        names.append(full)
        if info.ispkg:
            names += import_submodules(full)
    return names


def load_plugins() -> list[str]:
    """Import every ``rfbench.plugins`` entry point once; return the names of those loaded.

    Called by each registry on first use. A plugin that raises on import is reported by one
    warning line (its name, its module and the error) and skipped.
    """
    global _loaded
    if _loaded is not None:
        return list(_loaded)
    _loaded = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        saved = snapshot()
        try:
            ep.load()
        except Exception as exc:  # a broken plugin must not break the suite
            restore(saved)
            error = " ".join(f"{type(exc).__name__}: {exc}".split())
            _log.warning(
                "rfbench plugin %r (%s) failed to load, skipped: %s", ep.name, ep.value, error
            )
            continue
        _loaded.append(ep.name)
    return list(_loaded)
