"""Names -> estimators: ``component@weights``, hybrids, aliases; ``rfbench list estimators``.

The public surface (see ``docs/architecture.md``): :func:`get` builds an estimator from its name,
:func:`describe` says what a name is without building it, :func:`estimator_names` lists every name,
:func:`make_weights` / :func:`weights_samplers` give the couplings, and the decorators
``register_component``, ``register_weights``, ``register_hybrid`` and ``register_alias`` add to it.
Every module of ``rfbench.features`` is imported on first use (a new module registers itself), and
then the ``rfbench.plugins`` entry points of installed packages (:mod:`rfbench.plugins`).

Options route the same way for every kind: ``weights_<option>`` goes to the coupling (e.g.
``weights_passes=3`` for ``@simrf-plus``), every other option to the component or hybrid.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeVar

from rfbench.errors import UserError
from rfbench.features.base import Component, Estimator, WeightsSampler, declares
from rfbench.features.options import WEIGHTS_PREFIX, accepted_options, split_options
from rfbench.names import split_name
from rfbench.plugins import claim, tracked

__all__ = [
    "EstimatorDescription",
    "HybridEntry",
    "UnknownEstimatorError",
    "describe",
    "estimator_names",
    "get",
    "list_estimators",
    "make_weights",
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
_loaded = False

C = TypeVar("C", bound=type)


@dataclass(frozen=True)
class HybridEntry:
    """A hybrid estimator family: ``factory(kernel=, m=, n=, weights=, **options)``.

    ``bipolar``: λ̂·K̂⁺⁺ + (1 − λ̂)·K̂^trig with random λ (HRF Eq. 12), sized by (m, n);
    ``default_n``: its λ projections when n is not given; ``variants``: its sharing variants (the
    first is the default), of which ``biased_variants`` reuse ω as τ, are biased and take n = m
    by default (CSE's shared-all).
    """

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
    from rfbench.plugins import import_submodules

    import_submodules("rfbench.features", skip=("theory",))  # theory: loaded on its first use


def _load() -> None:
    """The built-ins, then the plugins (:mod:`rfbench.plugins`)."""
    global _loaded
    if _loaded:
        return
    from rfbench.plugins import load_plugins

    load_builtins()
    _loaded = True  # before the plugins: they may use this registry while imported
    load_plugins()


class UnknownEstimatorError(UserError):
    """An estimator name the registry does not know."""


def _resolve(name: str) -> tuple[str, dict[str, Any]]:
    """(the component/hybrid name, the options an alias fixes)."""
    _load()
    target, fixed = _ALIASES.get(name, (name, {}))
    return target, dict(fixed)


def get(
    name: str, kernel: str = "softmax", m: int = 128, n: int | None = None, **options: Any
) -> Estimator:
    """The estimator called ``name`` for ``kernel`` with m projections (n for a hybrid's λ)."""
    target, fixed = _resolve(name)
    head, weights_name = split_name(target)
    own, weights_options = split_options({**fixed, **options})
    if head in _HYBRIDS:
        entry = _HYBRIDS[head]
        if weights_name is not None and not entry.takes_weights:
            raise UnknownEstimatorError(f"{head} takes no '@weights' suffix (got {name!r})")
        weights = make_weights(weights_name or entry.default_weights, **weights_options)
        return entry.factory(kernel=kernel, m=m, n=n, weights=weights, **own)
    if head not in _COMPONENTS:
        raise UnknownEstimatorError(_unknown(name))
    from rfbench.features.estimator import ComponentEstimator

    if n is not None:
        raise ValueError(f"n (λ projections) applies to hybrids only, not {name!r}")
    weights = make_weights(weights_name or "iid", **weights_options)
    return ComponentEstimator(_COMPONENTS[head](**own), weights, kernel=kernel, m=m)


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


def _unknown(name: str) -> str:
    names = sorted(_COMPONENTS) + sorted(_HYBRIDS) + sorted(_ALIASES)
    return (
        f"unknown estimator {name!r}; use component@weights with component in "
        f"{', '.join(names)} and weights in {', '.join(sorted(_WEIGHTS))} "
        "(see `rfbench list estimators`)"
    )


@dataclass(frozen=True)
class EstimatorDescription:
    """What an estimator name stands for, without building it (one row of ``rfbench list``).

    ``component`` is the feature function or hybrid family (before '@'), ``weights`` the coupling
    (defaults filled in), ``variant`` the sharing variant an alias fixes (None: the caller's
    choice among ``variants``), ``options`` every option ``get`` accepts with its default
    (``weights_*`` go to the coupling; ``...`` marks a required one), ``features_per_projection``
    the map entries per projection ω_i (components; None for hybrids, whose width depends on n),
    ``theory`` whether a closed-form MSE exists, ``default_n`` a bipolar hybrid's λ projections
    when n is not given (None: n = m for a shared-all variant).

    Capabilities (docs/extending.md#capabilities), declared by implementing a method:
    ``precision_form`` — the map in a given dtype (``Estimator.dtype_parts``, e.g. HRF Eq. 2-3,
    DERF Thm 4.1), needed by the precision experiment; ``projection_terms`` — per-projection log
    terms (``Estimator.projection_log_terms``), needed by kernel-regression classify.
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
    theory: bool
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
    from rfbench.features import theory

    target, fixed = _resolve(name)
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
    opts = {
        **accepted_options(hybrid.factory if hybrid else _COMPONENTS[head], ("kernel", "m", "n")),
        **{f"{WEIGHTS_PREFIX}{k}": v for k, v in accepted_options(ws).items()},
    }
    variant = fixed.get("variant")
    full = f"{head}@{wname}" if hybrid and hybrid.takes_weights else target
    alias = name in _ALIASES
    common = {
        "name": name,
        "kind": "alias" if alias else ("hybrid" if hybrid else "component"),
        "target": full,
        "component": head,
        "weights": wname,
        "variant": variant,
        "options": MappingProxyType({k: v for k, v in opts.items() if k not in fixed}),
        "theory": theory.has_theory(name if alias else full),
    }
    if hybrid is None:
        comp = _COMPONENTS[head]
        return EstimatorDescription(
            **common,
            data_dependent=comp.data_dependent,
            features_per_projection=comp.outputs,
            kernels=tuple(comp.kernels),
            unbiased=comp.unbiased and ws.marginally_gaussian,
            paper=comp.paper,
            description=_alias_text(name, target, fixed) or f"{comp.description}; {ws.description}",
            precision_form=declares(comp, "dtype_parts", Component),
            projection_terms=True,  # every component has log_terms
        )
    variants = (variant,) if variant else hybrid.variants
    return EstimatorDescription(
        **common,
        data_dependent=hybrid.data_dependent,
        features_per_projection=None,
        kernels=tuple(hybrid.kernels),
        unbiased=hybrid.unbiased
        and ws.marginally_gaussian
        and not (variant and variant in hybrid.biased_variants),
        paper=hybrid.paper,
        description=_alias_text(name, full, fixed) or hybrid.description,
        hybrid=True,
        bipolar=hybrid.bipolar,
        default_n=None if variant in hybrid.biased_variants else hybrid.default_n,
        variants=variants,
        precision_form=declares(hybrid.factory, "dtype_parts", Estimator),
        projection_terms=declares(hybrid.factory, "projection_log_terms", Estimator),
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
        names += [f"{h}@{w}" for w in _WEIGHTS] if entry.takes_weights else [h]
    return names + list(_ALIASES)


def list_estimators() -> list[EstimatorDescription]:
    """The description of every name of :func:`estimator_names`, in that order."""
    return [describe(name) for name in estimator_names()]
