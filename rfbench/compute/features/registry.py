"""Names -> estimators: ``component@weights``, hybrids, aliases, with options in the name
(``gerf-fixed(A=-0.25)@orf``; ``weights_<option>`` goes to the coupling); ``rfbench list
estimators`` (docs/architecture.md#layout, docs/methods.md#options-in-names). The built-ins, then
the ``rfbench.plugins`` entry points, register themselves on first use.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeVar

from rfbench.compute.checks import UserError
from rfbench.compute.features.base import Component, Estimator, WeightsSampler
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
    """A hybrid estimator family: ``factory(kernel=, m=, n=, weights=, **options)``
    (docs/extending.md#a-hybrid; ``bipolar`` and ``data_dependent``: for a factory that is not an
    :class:`Estimator` class, which declares them itself)."""

    name: str
    factory: Callable[..., Estimator]
    kernels: tuple[str, ...]
    paper: str
    unbiased: bool
    description: str
    default_weights: str = "iid"
    takes_weights: bool = True
    bipolar: bool = False
    default_n: int | None = None
    variants: tuple[str, ...] = ()
    biased_variants: tuple[str, ...] = ()
    data_dependent: bool = False

    @classmethod
    def of(cls, estimator: type[Estimator], unbiased: bool, **fields: Any) -> HybridEntry:
        """The entry of an :class:`Estimator` class for every kernel, named by its ``family``,
        with its ``paper`` and ``description``."""
        e: Any = estimator
        return cls(e.family, estimator, KERNELS, e.paper, unbiased, e.description, **fields)


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

    import_submodules(
        "rfbench.compute.features", skip=("theory",)
    )  # theory: loaded on its first use


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


def _resolve(name: str) -> tuple[str, dict[str, Any]]:
    """(the component/hybrid name, the options an alias fixes)."""
    _load()
    target, fixed = _ALIASES.get(name, (name, {}))
    return target, dict(fixed)


def get(
    name: str, kernel: str = "softmax", m: int = 128, n: int | None = None, **options: Any
) -> Estimator:
    """The estimator called ``name`` for ``kernel`` with m projections (n for a hybrid's λ).

    Options come from ``options`` and from the name (``gerf-fixed(A=-0.25)@orf``); the built
    estimator's ``name`` then carries them too, so no closed form of the plain name applies.
    """
    bare, named, named_weights = parse_name(name)
    target, fixed = _resolve(bare)
    head, weights_name = split_name(target)
    prefixed = {f"{WEIGHTS_PREFIX}{k}": v for k, v in named_weights.items()}
    own, weights_options = split_options({**fixed, **named, **prefixed, **options})
    hybrid = _HYBRIDS.get(head)
    if hybrid is None and head not in _COMPONENTS:
        raise UnknownEstimatorError(_unknown(name))
    if hybrid is not None and weights_name is not None and not hybrid.takes_weights:
        raise UnknownEstimatorError(f"{head} takes no '@weights' suffix (got {name!r})")
    if n is not None and hybrid is None:
        raise ValueError(f"n (λ projections) applies to hybrids only, not {name!r}")
    wname = weights_name or (hybrid.default_weights if hybrid else "iid")
    _check_names(name, head, hybrid, named, fixed, wname, named_weights)
    _check_hybrid_weights(name, hybrid, wname)
    with _building(name, bool(named or named_weights)):
        weights = make_weights(wname, **weights_options)
        if hybrid is not None:
            est = hybrid.factory(kernel=kernel, m=m, n=n, weights=weights, **own)
        else:
            from rfbench.compute.features.estimator import ComponentEstimator

            est = ComponentEstimator(_COMPONENTS[head](**own), weights, kernel=kernel, m=m)
    if named or named_weights:
        est.name = _full_name(head, {**fixed, **named}, wname, named_weights, hybrid)
    return est


def _check_names(
    name: str,
    head: str,
    hybrid: HybridEntry | None,
    named: dict[str, Any],
    fixed: dict[str, Any],
    wname: str,
    named_weights: dict[str, Any],
) -> None:
    """The options a name carries exist (an alias's fixed ones cannot be set again)."""
    factory = hybrid.factory if hybrid else _COMPONENTS[head]
    again = sorted(set(named) & set(fixed))
    if again:
        raise EstimatorOptionError(
            f"estimator {name!r}: {split_name(name)[0].partition('(')[0]} fixes "
            f"{again[0]}={fixed[again[0]]}; name {head} to choose it"
        )
    _check_options(name, head, factory, named, tuple(fixed))
    if wname in _WEIGHTS:
        _check_options(name, f"weights {wname!r}", _WEIGHTS[wname], named_weights)


def _check_hybrid_weights(name: str, hybrid: HybridEntry | None, wname: str) -> None:
    """Hybrids draw their projections without data: no coupling fitted to data (``@fitted``)."""
    if hybrid is not None and wname in _WEIGHTS and _WEIGHTS[wname].data_dependent:
        raise UnknownEstimatorError(
            f"estimator {name!r}: weights {wname!r} are fitted to data, which {hybrid.name} "
            f"does not pass to its couplings; use them with a component (e.g. positive@{wname})"
        )


def _full_name(
    head: str, named: dict, wname: str, named_weights: dict, hybrid: HybridEntry | None
) -> str:
    """The canonical spelling of a name with options (the built estimator's ``name``)."""
    if hybrid is not None and not hybrid.takes_weights:
        return format_part(head, named)
    return f"{format_part(head, named)}@{format_part(wname, named_weights)}"


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
    """What an estimator name stands for, without building it (one row of ``rfbench list``;
    the facts and capabilities of :class:`Estimator`, docs/extending.md#capabilities).

    ``options``: every option ``get`` accepts with its default (``...``: required);
    ``theory_name``: the name a closed-form MSE would be registered under (None when options
    change the estimator); ``default_n``: a bipolar hybrid's λ projections when n is not given.
    """

    name: str
    kind: Literal["component", "hybrid", "alias"]
    target: str
    component: str
    weights: str
    variant: str | None
    options: Mapping[str, Any]
    data_dependent: bool
    features_per_projection: int | None
    kernels: tuple[str, ...]
    unbiased: bool
    theory_name: str | None
    paper: str
    description: str
    hybrid: bool = False
    bipolar: bool = False
    default_n: int | None = None
    variants: tuple[str, ...] = ()
    precision_form: bool = False
    projection_terms: bool = False


def describe(name: str) -> EstimatorDescription:
    """The :class:`EstimatorDescription` of a registered name (UnknownEstimatorError if none)."""
    bare, named, named_weights = parse_name(name)
    target, fixed = _resolve(bare)
    head, weights_name = split_name(target)
    hybrid = _HYBRIDS.get(head)
    if hybrid is None and head not in _COMPONENTS:
        raise UnknownEstimatorError(_unknown(name))
    if hybrid is not None and weights_name is not None and not hybrid.takes_weights:
        raise UnknownEstimatorError(f"{head} takes no '@weights' suffix (got {name!r})")
    wname = weights_name or (hybrid.default_weights if hybrid else "iid")
    if wname not in _WEIGHTS:
        raise UnknownEstimatorError(_unknown(name))
    ws = _WEIGHTS[wname]
    # the facts are the estimator's own (data-free constructors: values checked now, not in a job)
    est = get(name, kernel=(hybrid or _COMPONENTS[head]).kernels[0])
    opts = {
        **accepted_options(hybrid.factory if hybrid else _COMPONENTS[head], ("kernel", "m", "n")),
        **{f"{WEIGHTS_PREFIX}{k}": v for k, v in accepted_options(ws).items()},
    }
    set_by_name = {*fixed, *named, *(f"{WEIGHTS_PREFIX}{k}" for k in named_weights)}
    variant = named.get("variant", fixed.get("variant"))
    plain = f"{head}@{wname}" if hybrid and hybrid.takes_weights else target
    full = (
        _full_name(head, {**fixed, **named}, wname, named_weights, hybrid)
        if set_by_name - set(fixed)
        else plain
    )
    alias = bare in _ALIASES
    common = {
        "name": name,
        "kind": "alias" if alias else ("hybrid" if hybrid else "component"),
        "target": full,
        "component": head,
        "weights": wname,
        "variant": variant,
        "options": MappingProxyType({k: v for k, v in opts.items() if k not in set_by_name}),
        # a closed form is of the default options: none for options set in the name
        "theory_name": (bare if alias else plain) if full == plain else None,
    }
    common |= {
        # an entry declares data dependence and bipolarity for a factory that is not a class
        "data_dependent": est.data_dependent or bool(hybrid and hybrid.data_dependent),
        "features_per_projection": est.features_per_projection,
        "unbiased": est.unbiased and (hybrid is None or hybrid.unbiased),
        "precision_form": est.precision_form,
        "projection_terms": est.projection_terms,
    }
    if hybrid is None:
        comp = _COMPONENTS[head]
        text = _alias_text(bare, target, fixed) or f"{comp.description}; {ws.description}"
        return EstimatorDescription(
            **common, kernels=tuple(comp.kernels), paper=comp.paper, description=text
        )
    return EstimatorDescription(
        **common,
        kernels=tuple(hybrid.kernels),
        paper=hybrid.paper,
        description=_alias_text(bare, full, fixed) or hybrid.description,
        hybrid=True,
        bipolar=est.bipolar or hybrid.bipolar,
        default_n=None if variant in hybrid.biased_variants else hybrid.default_n,
        variants=(variant,) if variant else hybrid.variants,
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
