"""Names -> estimators (DESIGN §3): ``component@weights``, hybrids, aliases; ``rfbench list``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from rfbench.errors import UserError
from rfbench.features.base import Component, Estimator, WeightsSampler

COMPONENTS: dict[str, type[Component]] = {}
WEIGHTS: dict[str, type[WeightsSampler]] = {}
HYBRIDS: dict[str, HybridEntry] = {}
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}

C = TypeVar("C", bound=type)


@dataclass(frozen=True)
class HybridEntry:
    """A hybrid estimator family: ``factory(kernel=, m=, n=, weights=, **options)``."""

    name: str
    factory: Callable[..., Estimator]
    kernels: tuple[str, ...]
    paper: str
    unbiased: bool
    description: str
    default_weights: str = "iid"
    takes_weights: bool = True


def register_component(cls: C) -> C:
    COMPONENTS[cls.name] = cls
    return cls


def register_weights(cls: C) -> C:
    WEIGHTS[cls.name] = cls
    return cls


def register_hybrid(entry: HybridEntry) -> HybridEntry:
    HYBRIDS[entry.name] = entry
    return entry


def register_alias(alias: str, target: str, **options: Any) -> None:
    """``alias`` means ``target`` with fixed options (e.g. ``cse`` = shared-all angular hybrid)."""
    ALIASES[alias] = (target, options)


def _load() -> None:
    # Importing these modules registers their classes (kept here to avoid import cycles).
    from rfbench.features import (  # noqa: F401
        cluster_hybrid,
        complex_exp,
        components,
        derf,
        hybrid,
        weights,
    )


class UnknownEstimatorError(UserError):
    """An estimator name the registry does not know."""


def split_name(name: str) -> tuple[str, str | None]:
    """``"trig@orf"`` -> ("trig", "orf"); ``"cluster-hybrid"`` -> ("cluster-hybrid", None)."""
    head, sep, tail = name.partition("@")
    return head, (tail if sep else None)


def get(
    name: str, kernel: str = "softmax", m: int = 128, n: int | None = None, **options: Any
) -> Estimator:
    """The estimator called ``name`` for ``kernel`` with m projections (n for a hybrid's λ)."""
    _load()
    if name in ALIASES:
        target, fixed = ALIASES[name]
        return get(target, kernel=kernel, m=m, n=n, **{**fixed, **options})
    head, weights_name = split_name(name)
    if head in HYBRIDS:
        entry = HYBRIDS[head]
        if weights_name is not None and not entry.takes_weights:
            raise UnknownEstimatorError(f"{head} takes no '@weights' suffix (got {name!r})")
        wname = weights_name or entry.default_weights
        return entry.factory(kernel=kernel, m=m, n=n, weights=make_weights(wname), **options)
    if head not in COMPONENTS:
        raise UnknownEstimatorError(_unknown(name))
    from rfbench.features.estimator import ComponentEstimator

    if n is not None:
        raise ValueError(f"n (λ projections) applies to hybrids only, not {name!r}")
    weights_options = {
        k[len("weights_") :]: v for k, v in options.items() if k.startswith("weights_")
    }
    comp_options = {k: v for k, v in options.items() if not k.startswith("weights_")}
    weights = make_weights(weights_name or "iid", **weights_options)
    return ComponentEstimator(COMPONENTS[head](**comp_options), weights, kernel=kernel, m=m)


def make_weights(name: str, **options: Any) -> WeightsSampler:
    """A weights sampler by name."""
    _load()
    if name not in WEIGHTS:
        raise UnknownEstimatorError(
            f"unknown weights {name!r}; allowed: {', '.join(sorted(WEIGHTS))}"
        )
    return WEIGHTS[name](**options)


def _unknown(name: str) -> str:
    names = sorted(COMPONENTS) + sorted(HYBRIDS) + sorted(ALIASES)
    return (
        f"unknown estimator {name!r}; use component@weights with component in "
        f"{', '.join(names)} and weights in {', '.join(sorted(WEIGHTS))} "
        "(see `rfbench list estimators`)"
    )


@dataclass(frozen=True)
class EstimatorInfo:
    """One row of ``rfbench list estimators``."""

    name: str
    kernels: tuple[str, ...]
    paper: str
    unbiased: bool
    theory: bool
    description: str


def estimator_names() -> list[str]:
    """Every registered name: component@weights, hybrid@weights, aliases."""
    _load()
    names = [f"{c}@{w}" for c in COMPONENTS for w in WEIGHTS]
    for h, entry in HYBRIDS.items():
        names += [f"{h}@{w}" for w in WEIGHTS] if entry.takes_weights else [h]
    return names + list(ALIASES)


def list_estimators() -> list[EstimatorInfo]:
    """Name, kernels, paper, unbiasedness and theory availability for every estimator."""
    _load()
    from rfbench.features import theory

    rows = []
    for c, comp in COMPONENTS.items():
        for w, ws in WEIGHTS.items():
            rows.append(
                EstimatorInfo(
                    f"{c}@{w}",
                    comp.kernels,
                    comp.paper,
                    comp.unbiased and ws.marginally_gaussian,
                    theory.has_theory(f"{c}@{w}"),
                    f"{comp.description}; {ws.description}",
                )
            )
    for h, entry in HYBRIDS.items():
        for w in WEIGHTS if entry.takes_weights else [None]:
            name = f"{h}@{w}" if w else h
            unbiased = entry.unbiased and (w is None or WEIGHTS[w].marginally_gaussian)
            rows.append(
                EstimatorInfo(
                    name,
                    entry.kernels,
                    entry.paper,
                    unbiased,
                    theory.has_theory(name),
                    entry.description,
                )
            )
    for alias, (target, opts) in ALIASES.items():
        head, weights = split_name(target)
        if weights is None and head in HYBRIDS:
            target = f"{head}@{HYBRIDS[head].default_weights}"
        base = next(r for r in rows if r.name == target)
        desc = f"alias of {target} ({', '.join(f'{k}={v}' for k, v in opts.items())})"
        unbiased = base.unbiased and opts.get("variant") != "shared-all"
        rows.append(
            EstimatorInfo(alias, base.kernels, base.paper, unbiased, theory.has_theory(alias), desc)
        )
    return rows
