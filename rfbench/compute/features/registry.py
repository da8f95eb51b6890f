"""Names -> estimators: ``component@weights``, hybrids, aliases, with options in the name
(``gerf-fixed(A=-0.25)@orf``; ``weights_<option>`` goes to the coupling); ``rfbench list
estimators`` (docs/architecture.md#layout, docs/methods.md#options-in-names). The built-ins, then
the ``rfbench.plugins`` entry points, register themselves on first use.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from rfbench.compute.checks import UserError
from rfbench.compute.features.base import Component, Estimator, WeightsSampler
from rfbench.compute.features.estimator import ComponentEstimator
from rfbench.compute.features.options import (
    SYNTAX,
    WEIGHTS_PREFIX,
    OptionSyntaxError,
    accepted_options,
    format_part,
    parse_part,
    split_options,
    split_outside_brackets,
)
from rfbench.compute.kernels import KERNELS
from rfbench.compute.plugins import BuiltinsThenPlugins, claim, tracked
from rfbench.compute.text import split_name

__all__ = [
    "EstimatorDescription",
    "EstimatorOptionError",
    "HybridEntry",
    "UnknownEstimatorError",
    "describe",
    "estimator_class",
    "estimator_names",
    "get",
    "list_estimators",
    "make_weights",
    "parse_name",
    "register_alias",
    "register_component",
    "register_hybrid",
    "register_weights",
    "split_name",
    "weights_samplers",
]

_COMPONENTS: dict[str, type[Component]] = tracked({})
_WEIGHTS: dict[str, type[WeightsSampler]] = tracked({})
_HYBRIDS: dict[str, HybridEntry] = tracked({})
_ALIASES: dict[str, tuple[str, dict[str, Any]]] = tracked({})

C = TypeVar("C", bound=type)


@dataclass(frozen=True)
class HybridEntry:
    """A hybrid estimator family: ``factory(kernel=, m=, n=, weights=, **options)``, an
    :class:`Estimator` class or a function returning one (docs/extending.md#a-hybrid).

    The entry says what the registry needs before building (its kernels, paper, description,
    default coupling and whether it takes one); everything else the built estimator answers
    itself (``unbiased``, ``bipolar``, ``data_dependent``, ``variants``, ...).
    """

    name: str
    factory: Callable[..., Estimator]
    kernels: tuple[str, ...]
    paper: str
    description: str
    _: KW_ONLY
    default_weights: str = "iid"
    takes_weights: bool = True

    @classmethod
    def of(cls, estimator: type[Estimator], **fields: Any) -> HybridEntry:
        """The entry of an :class:`Estimator` class for every kernel, named by its ``family``,
        with its ``paper`` and ``description``."""
        e: Any = estimator
        return cls(e.family, estimator, KERNELS, e.paper, e.description, **fields)


#: components, hybrids and aliases are all estimator names: one namespace
_ESTIMATOR_NAMES = "estimator"


def register_component(cls: C) -> C:
    """Class decorator: make a :class:`Component` available as ``<cls.name>@<weights>``."""
    claim(_COMPONENTS, "component", cls.name, cls, cls, space=_ESTIMATOR_NAMES)
    return cls


def register_weights(cls: C) -> C:
    """Class decorator: make a :class:`WeightsSampler` available as ``<component>@<cls.name>``."""
    claim(_WEIGHTS, "weights", cls.name, cls, cls)
    return cls


def register_hybrid(entry: HybridEntry) -> HybridEntry:
    """Make a hybrid family available as ``<entry.name>@<weights>`` (or bare, default weights)."""
    claim(_HYBRIDS, "hybrid", entry.name, entry, entry.factory, space=_ESTIMATOR_NAMES)
    return entry


def register_alias(alias: str, target: str, **options: Any) -> None:
    """``alias`` means ``target`` with fixed options (e.g. ``cse`` = shared-all angular hybrid)."""
    module = sys._getframe(1).f_globals.get("__name__", "?")
    origin = f"{module}.register_alias({alias!r}, {target!r}, {options!r})"
    claim(_ALIASES, "alias", alias, (target, options), origin, space=_ESTIMATOR_NAMES)


def load_builtins() -> None:
    """Import every module of this package (registration happens on import)."""
    from rfbench.compute.plugins import import_submodules

    import_submodules("rfbench.compute.features", skip=("theory",))  # theory: on its first use


#: the built-ins, then the plugins, on first use (rfbench.compute.plugins)
_load = BuiltinsThenPlugins(load_builtins)


class UnknownEstimatorError(UserError):
    """An estimator name the registry does not know."""


class EstimatorOptionError(UnknownEstimatorError):
    """Options in an estimator name that its component, hybrid or coupling does not take."""


def parse_name(name: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """``"gerf-fixed(A=-0.25)@orf(x=1)"`` -> ("gerf-fixed@orf", {"A": -0.25}, {"x": 1}): the
    name without options, the component's or hybrid's options, the coupling's options.

    Raises :class:`EstimatorOptionError` for options not written ``(key=value, ...)``.
    """
    if "(" not in name and ")" not in name:
        return name, {}, {}
    try:
        parts = split_outside_brackets(name, "@")
        if not 1 <= len(parts) <= 2:
            raise OptionSyntaxError(f"{name!r} is not {SYNTAX}")
        head, own = parse_part(parts[0])
        weights, weights_options = parse_part(parts[1]) if len(parts) == 2 else ("", {})
    except OptionSyntaxError as exc:
        raise EstimatorOptionError(f"estimator {exc}") from None
    return (f"{head}@{weights}" if weights else head), own, weights_options


def _check_options(
    name: str, what: str, factory: Callable, given: dict[str, Any], exclude: tuple[str, ...] = ()
) -> None:
    """Refuse options in a name that ``factory`` does not take (one line naming those it does)."""
    takes = accepted_options(factory, ("kernel", "m", "n", *exclude))
    unknown = sorted(set(given) - set(takes))
    if unknown:
        allowed = ", ".join(takes) or "none"
        raise EstimatorOptionError(
            f"estimator {name!r}: {what} takes no option {unknown[0]!r} (its options: {allowed})"
        )


@contextmanager
def _building(name: str, named: bool) -> Iterator[None]:
    """Turn a constructor's ValueError/TypeError into a one-line EstimatorOptionError when the
    name carried options (a user's value); otherwise let it through (a caller's bug)."""
    try:
        yield
    except UserError:
        raise
    except (ValueError, TypeError) as exc:
        if not named:
            raise
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise EstimatorOptionError(f"estimator {name!r}: {message}") from None


#: the projections ``get`` builds when not told (and ``describe`` builds at)
DEFAULT_M = 128


@dataclass(frozen=True)
class _Name:
    """A name resolved once (its alias, the options it carries, its family and coupling): ``get``
    builds from it, ``describe`` reads it."""

    name: str  # as given
    bare: str  # without options
    target: str  # an alias's target, else the bare name
    head: str  # the component or hybrid
    hybrid: HybridEntry | None
    weights: str  # the coupling (a hybrid's default when the name gives none)
    fixed: dict[str, Any]  # the options an alias fixes
    named: dict[str, Any]  # the options in the name
    named_weights: dict[str, Any]  # the coupling's options in the name

    @property
    def family(self) -> Any:
        """The hybrid entry or component class: kernels, paper, description, options."""
        return self.hybrid or _COMPONENTS[self.head]

    @property
    def factory(self) -> Callable[..., Any]:
        return self.hybrid.factory if self.hybrid else _COMPONENTS[self.head]

    @property
    def full_name(self) -> str:
        """The canonical spelling of the name with its options (the built estimator's ``name``)."""
        named = {**self.fixed, **self.named}
        if self.hybrid is not None and not self.hybrid.takes_weights:
            return format_part(self.head, named)
        return f"{format_part(self.head, named)}@{format_part(self.weights, self.named_weights)}"

    def build(self, kernel: str, m: int, n: int | None, **options: Any) -> Estimator:
        """The estimator (see :func:`get`)."""
        prefixed = {f"{WEIGHTS_PREFIX}{k}": v for k, v in self.named_weights.items()}
        own, weights_options = split_options({**self.fixed, **self.named, **prefixed, **options})
        if n is not None and self.hybrid is None:
            raise ValueError(f"n (λ projections) applies to hybrids only, not {self.name!r}")
        self._check_named()
        named = bool(self.named or self.named_weights)
        with _building(self.name, named):
            weights = make_weights(self.weights, **weights_options)
            if self.hybrid is not None:
                est = self.hybrid.factory(kernel=kernel, m=m, n=n, weights=weights, **own)
            else:
                est = ComponentEstimator(_COMPONENTS[self.head](**own), weights, kernel=kernel, m=m)
        if named:
            est.name = self.full_name
        return est

    def _check_named(self) -> None:
        """The options the name carries exist (an alias's fixed ones cannot be set again), and a
        hybrid, which draws its projections without data, gets no coupling fitted to data."""
        name, fixed, wname = self.name, self.fixed, self.weights
        again = sorted(set(self.named) & set(fixed))
        if again:
            raise EstimatorOptionError(
                f"estimator {name!r}: {split_name(name)[0].partition('(')[0]} fixes "
                f"{again[0]}={fixed[again[0]]}; name {self.head} to choose it"
            )
        _check_options(name, self.head, self.factory, self.named, tuple(fixed))
        if wname not in _WEIGHTS:
            return
        _check_options(name, f"weights {wname!r}", _WEIGHTS[wname], self.named_weights)
        if self.hybrid is not None and _WEIGHTS[wname].data_dependent:
            raise UnknownEstimatorError(
                f"estimator {name!r}: weights {wname!r} are fitted to data, which "
                f"{self.hybrid.name} does not pass to its couplings; use them with a component "
                f"(e.g. positive@{wname})"
            )


def _resolve(name: str, known_weights: bool = False) -> _Name:
    """The one resolution of a name (UnknownEstimatorError for a name the registry lacks; with
    ``known_weights``, an unknown coupling is one too, else ``make_weights`` names it)."""
    bare, named, named_weights = parse_name(name)
    _load()
    target, fixed = _ALIASES.get(bare, (bare, {}))
    head, weights_name = split_name(target)
    hybrid = _HYBRIDS.get(head)
    if hybrid is None and head not in _COMPONENTS:
        raise UnknownEstimatorError(_unknown(name))
    if hybrid is not None and weights_name is not None and not hybrid.takes_weights:
        raise UnknownEstimatorError(f"{head} takes no '@weights' suffix (got {name!r})")
    wname = weights_name or (hybrid.default_weights if hybrid else "iid")
    if known_weights and wname not in _WEIGHTS:
        raise UnknownEstimatorError(_unknown(name))
    return _Name(name, bare, target, head, hybrid, wname, dict(fixed), named, named_weights)


def get(
    name: str, kernel: str = "softmax", m: int = DEFAULT_M, n: int | None = None, **options: Any
) -> Estimator:
    """The estimator called ``name`` for ``kernel`` with m projections (n for a hybrid's λ).

    Options come from ``options`` and from the name (``gerf-fixed(A=-0.25)@orf``); the built
    estimator's ``name`` then carries them too, so no closed form of the plain name applies.
    """
    return _resolve(name).build(kernel, m, n, **options)


def estimator_class(name: str) -> type[Estimator]:
    """The class ``get(name)`` builds, for its class-level facts (``kind``, ``bipolar``) before
    choosing its sizes: a hybrid's factory when it is a class (a factory function's estimator is
    built to answer), else the component estimator."""
    resolved = _resolve(name, known_weights=True)
    if resolved.hybrid is None:
        return ComponentEstimator
    if isinstance(resolved.hybrid.factory, type):
        return resolved.hybrid.factory
    return type(describe(name).estimator)


def make_weights(name: str, **options: Any) -> WeightsSampler:
    """A weights sampler by name."""
    _load()
    if name not in _WEIGHTS:
        raise UnknownEstimatorError(
            f"unknown weights {name!r}; allowed: {', '.join(sorted(_WEIGHTS))}"
        )
    return _WEIGHTS[name](**options)


def weights_samplers() -> Mapping[str, type[WeightsSampler]]:
    """Every registered coupling, by name (read-only)."""
    _load()
    return MappingProxyType(_WEIGHTS)


#: how many close names an unknown estimator's message suggests
SUGGESTIONS = 3


def _unknown(name: str) -> str:
    """One short line: the unknown name, the closest registered names, where the list is."""
    import difflib

    bare = parse_name(name)[0] if "(" in name else name
    head, weights = split_name(bare)
    known = [*estimator_names(), *_COMPONENTS, *_HYBRIDS]
    close = difflib.get_close_matches(bare, known, n=SUGGESTIONS, cutoff=0.6)
    notes = []
    if weights is not None and weights not in _WEIGHTS and head in {*_COMPONENTS, *_HYBRIDS}:
        close = [f"{head}@{w}" for w in difflib.get_close_matches(weights, _WEIGHTS, SUGGESTIONS)]
        notes.append(f"no weights {weights!r}")
    if close:
        notes.append(f"closest: {', '.join(map(repr, close))}")
    notes.append("all names: `rfbench list estimators`")
    return f"unknown estimator {name!r} ({'; '.join(notes)})"


@dataclass(frozen=True)
class EstimatorDescription:
    """What a registered name says (one row of ``rfbench list``), with the estimator it builds,
    which answers every other question itself (``estimator.unbiased``, ``.bipolar``,
    ``.data_dependent``, ``.features_per_projection``, ``.precision_form``, …;
    docs/extending.md#capabilities).

    ``alias``: the name is an alias; ``target``: its canonical spelling (options set in the name
    written out); ``component``: the component or hybrid it names; ``coupling``: the coupling it
    resolves to (a hybrid's default when it takes none); ``variant``: a variant the name fixes;
    ``options``: every option ``get`` accepts with its default (``...``: required), less those the
    name sets; ``theory_name``: the name a closed-form MSE would be registered under (None when
    options change the estimator); ``estimator``: built once, at the first of ``kernels`` and the
    default sizes and options.
    """

    name: str
    alias: bool
    target: str
    component: str
    coupling: str
    variant: str | None
    options: Mapping[str, Any]
    kernels: tuple[str, ...]
    theory_name: str | None
    paper: str
    description: str
    estimator: Estimator


def describe(name: str) -> EstimatorDescription:
    """The :class:`EstimatorDescription` of a registered name (UnknownEstimatorError if none)."""
    r = _resolve(name, known_weights=True)
    family = r.family
    ws = _WEIGHTS[r.weights]
    # data-free constructors: the values in the name are checked now, not in a job
    est = r.build(family.kernels[0], DEFAULT_M, None)
    opts = {
        **accepted_options(r.factory, ("kernel", "m", "n")),
        **{f"{WEIGHTS_PREFIX}{k}": v for k, v in accepted_options(ws).items()},
    }
    set_by_name = {*r.fixed, *r.named, *(f"{WEIGHTS_PREFIX}{k}" for k in r.named_weights)}
    plain = f"{r.head}@{r.weights}" if r.hybrid and r.hybrid.takes_weights else r.target
    full = r.full_name if set_by_name - set(r.fixed) else plain
    alias = r.bare in _ALIASES
    if r.hybrid is None:
        text = _alias_text(r.bare, r.target, r.fixed) or f"{family.description}; {ws.description}"
    else:
        text = _alias_text(r.bare, full, r.fixed) or family.description
    return EstimatorDescription(
        name=name,
        alias=alias,
        target=full,
        component=r.head,
        coupling=r.weights,
        variant=r.named.get("variant", r.fixed.get("variant")),
        options=MappingProxyType({k: v for k, v in opts.items() if k not in set_by_name}),
        kernels=tuple(family.kernels),
        # a closed form is of the default options: none for options set in the name
        theory_name=(r.bare if alias else plain) if full == plain else None,
        paper=family.paper,
        description=text,
        estimator=est,
    )


def _alias_text(name: str, target: str, fixed: dict[str, Any]) -> str:
    if name not in _ALIASES:
        return ""
    return f"alias of {target} ({', '.join(f'{k}={v}' for k, v in fixed.items())})"


def estimator_names() -> list[str]:
    """Every registered name: component@weights, hybrid@weights (or bare hybrid), aliases."""
    _load()
    names = [f"{c}@{w}" for c in _COMPONENTS for w in _WEIGHTS]
    for h, entry in _HYBRIDS.items():
        fixed = [w for w, ws in _WEIGHTS.items() if not ws.data_dependent]
        names += [f"{h}@{w}" for w in fixed] if entry.takes_weights else [h]
    return names + list(_ALIASES)


def list_estimators() -> list[EstimatorDescription]:
    """The description of every name of :func:`estimator_names`, in that order."""
    return [describe(name) for name in estimator_names()]
