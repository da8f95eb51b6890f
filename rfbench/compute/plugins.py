"""Discovery of registered components: the package's own modules and other packages' plugins
(entry-point group ``rfbench.plugins``; docs/extending.md#shipping-it-as-a-plugin-package).

A registry announces itself to this loader by creating its :class:`BuiltinsThenPlugins` when its
module is imported; the loader names none of them, so no layer depends on a layer above it through
a string. Every built-in of every announced registry is registered before the first plugin is
imported, and a registry that a plugin imports for the first time has its built-ins registered
before the plugin's first name. Every registration goes through :func:`claim`, which refuses a
name another origin holds; a plugin that fails to import for any reason is skipped with one
warning line, and what it registered is taken back from every :func:`tracked` table. A real
Ctrl-C still stops the command.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import signal
from collections.abc import Callable, Collection, Iterator, MutableMapping, MutableSet
from contextlib import contextmanager
from importlib.metadata import entry_points
from typing import Any, TypeVar

ENTRY_POINT_GROUP = "rfbench.plugins"

_log = logging.getLogger("rfbench.plugins")
_loaded: list[str] | None = None
_loading: str | None = None  # "plugin 'name'" while a plugin is being imported
_TABLES: list[MutableMapping | MutableSet] = []
#: every registry's loader, announced as its module is imported (:class:`BuiltinsThenPlugins`)
_REGISTRIES: list[BuiltinsThenPlugins] = []
#: the tables as they were before the plugin being imported (:func:`restore` puts them back)
_saved: list[MutableMapping | MutableSet] | None = None
T = TypeVar("T", bound=MutableMapping | MutableSet)


class NameClash(ValueError):
    """A registration under a name that something else already holds."""


def tracked(table: T) -> T:
    """Declare a registry's table (a dict or set that plugins add to); returns it unchanged."""
    _TABLES.append(table)
    return table


#: (namespace, name) -> (identity, kind, who) of every entry registered through :func:`claim`
_OWNERS: dict[tuple[str, str], tuple[str, str, str]] = tracked({})


def _identity(origin: object) -> str:
    """``module.qualname`` of a class or function; a string stands for itself."""
    if isinstance(origin, str):
        return origin
    module = getattr(origin, "__module__", None) or "?"
    return f"{module}.{getattr(origin, '__qualname__', type(origin).__qualname__)}"


def claim(
    table: MutableMapping[str, Any],
    kind: str,
    name: str,
    value: Any,
    origin: object,
    space: str | None = None,
) -> None:
    """Register ``value`` as ``table[name]``, refusing a name that another origin holds.

    Parameters
    ----------
    table : the registry's table (one of :func:`tracked`).
    kind : what the entry is, for the message ("experiment", "figure", "component", ...).
    name : the name users type.
    value : the entry.
    origin : the class or function that defines the entry (``module.qualname`` tells two apart
        and is named in the message), or a string naming it.
    space : the namespace the name lives in (default: ``kind``); tables sharing one (components,
        hybrids and aliases are all estimator names) refuse each other's names.

    Raises
    ------
    TypeError
        For an empty name.
    NameClash
        When ``name`` is taken by a different origin: one line naming both (which plugin or
        module, which built-in). Registering the same origin again (a re-import) is allowed.
    """
    if not name:
        raise TypeError(f"a {kind} needs a non-empty name: {value!r}")
    identity = _identity(origin)
    plugin = _loading
    if plugin and _pending() and _is_builtin(identity):
        plugin = None  # a built-in module the plugin imported before its registry had loaded
    elif plugin:
        _builtins_first()
    builtin = f"built-in {identity}" if _is_builtin(identity) else identity
    who = f"{plugin} ({identity})" if plugin else builtin
    key = (space or kind, name)
    taken = _OWNERS.get(key)
    if taken is None and name in table:  # registered without claim (by hand)
        taken = (repr(table[name]), kind, repr(table[name]))
    if taken is not None and taken[0] != identity:
        raise NameClash(
            f"{taken[1]} {name!r} is already registered by {taken[2]}; {who} cannot take it"
        )
    table[name] = value
    _OWNERS[key] = (identity, kind, who)
    if not plugin and _saved is not None:  # a built-in stays if the plugin is taken back
        _keep(_saved, table, name, value)
        _keep(_saved, _OWNERS, key, _OWNERS[key])


def _is_builtin(identity: str) -> bool:
    return identity.startswith("rfbench.")


def _keep(saved: list, table: MutableMapping, key: Any, value: Any) -> None:
    """Write ``table[key] = value`` into its copy in ``saved`` (a :func:`snapshot`), if any."""
    for live, copy in zip(_TABLES, saved, strict=False):
        if live is table:
            copy[key] = value  # type: ignore[index]


def _pending() -> bool:
    """Whether an announced registry has not registered its built-ins yet."""
    return not all(registry.builtins_in for registry in _REGISTRIES)


def _builtins_first() -> None:
    """Register the built-ins of every announced registry that has not yet, as built-ins; while
    a plugin is imported, tables created since its :func:`snapshot` join the copies to restore,
    built-ins in."""
    global _loading
    plugin, _loading = _loading, None
    try:
        for registry in _REGISTRIES:  # (grows when built-ins import another registry)
            registry.builtins()
    finally:
        _loading = plugin
    if _saved is not None:
        _saved.extend(table.copy() for table in _TABLES[len(_saved) :])  # type: ignore[attr-defined]


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


@contextmanager
def _noting_ctrl_c() -> Iterator[list[int]]:
    """Tell a real Ctrl-C from a ``KeyboardInterrupt`` a plugin raises: the list gets the signal
    when SIGINT arrives (its handler still raises). With SIGINT ignored none is real; off the main
    thread, or with SIGINT at another handler, every ``KeyboardInterrupt`` counts as a real one."""
    pressed: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        pressed.append(signum)
        raise KeyboardInterrupt

    current = signal.getsignal(signal.SIGINT)
    if current is signal.SIG_IGN:  # no Ctrl-C can arrive: any KeyboardInterrupt is a plugin's
        yield pressed
        return
    installed = False
    if current is signal.default_int_handler:  # (someone else's handler is left alone)
        try:
            signal.signal(signal.SIGINT, handler)
            installed = True
        except ValueError:  # not the main thread
            pass
    if not installed:
        yield [signal.SIGINT]
        return
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _what_went_wrong(exc: BaseException) -> str:
    """``Type: message`` of an error; ``it raised SystemExit(0) while imported`` of an exit or an
    interrupt (whose message alone, ``0``, would say nothing)."""
    if isinstance(exc, Exception):
        return f"{type(exc).__name__}: {exc}"
    return f"it raised {type(exc).__name__}({', '.join(map(repr, exc.args))}) while imported"


def load_plugins() -> list[str]:
    """Import every ``rfbench.plugins`` entry point once; return the names of those loaded.

    Called by each registry on first use. The built-ins of every announced registry are loaded
    first, and those of a registry a plugin imports before the plugin's first name, so a plugin
    cannot take a built-in name. A plugin that raises anything on import (a clash, ``SystemExit``,
    its own ``KeyboardInterrupt``) is reported by one warning line (its name, its module and the
    error) and skipped; a real Ctrl-C stops loading (``KeyboardInterrupt``).
    """
    global _loaded, _loading, _saved
    if _loaded is not None:
        return list(_loaded)
    _loaded = []
    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    if found:
        _builtins_first()
    for ep in found:
        _saved = snapshot()
        _loading = f"plugin {ep.name!r}"
        try:
            with _noting_ctrl_c() as pressed:
                ep.load()
        except BaseException as exc:  # noqa: BLE001 - a plugin must not end or hijack the suite
            restore(_saved)
            if isinstance(exc, KeyboardInterrupt) and pressed:
                raise
            error = " ".join(_what_went_wrong(exc).split())
            _log.warning(
                "rfbench plugin %r (%s) failed to load, skipped: %s", ep.name, ep.value, error
            )
            continue
        finally:
            _loading, _saved = None, None
        _loaded.append(ep.name)
    return list(_loaded)


class BuiltinsThenPlugins:
    """A registry's announcement to the plugin loader and the one way it fills itself on first
    use: its built-in modules, then every plugin (:func:`load_plugins`), once per process.

    ``load = BuiltinsThenPlugins(load_builtins)`` in the registry's module, then
    ``load()`` before any lookup; ``loaded`` says whether it has run (a test may set it to skip
    discovery), ``builtins_in`` whether ``load_builtins`` has.
    """

    def __init__(self, load_builtins: Callable[[], None]) -> None:
        self.load_builtins = load_builtins
        self.loaded = False
        self.builtins_in = False
        _REGISTRIES.append(self)

    def builtins(self) -> None:
        """Register the built-ins (once)."""
        if not self.builtins_in:
            self.builtins_in = True
            self.load_builtins()

    def __call__(self) -> None:
        if self.loaded:
            return
        self.builtins()
        self.loaded = True  # before the plugins: they may use this registry while imported
        load_plugins()
