"""Options of components, couplings and hybrids: what each accepts, and where each one goes."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from typing import Any

#: ``get(name, weights_<option>=v)`` passes ``<option>=v`` to the coupling after '@'.
WEIGHTS_PREFIX = "weights_"


def accepted_options(factory: Callable[..., Any], exclude: Collection[str] = ()) -> dict[str, Any]:
    """Keyword options of a class or factory with their defaults (``...`` if required).

    ``self``, ``weights`` (the coupling object a hybrid receives), ``*args``/``**kwargs`` and the
    names in ``exclude`` are left out.
    """
    out = {}
    for p in inspect.signature(factory).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in ("self", "weights", *exclude):
            continue
        out[p.name] = ... if p.default is p.empty else p.default
    return out


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the estimator's own options, the coupling's options without the ``weights_`` prefix)."""
    own = {k: v for k, v in options.items() if not k.startswith(WEIGHTS_PREFIX)}
    weights = {k[len(WEIGHTS_PREFIX) :]: v for k, v in options.items() if k not in own}
    return own, weights
