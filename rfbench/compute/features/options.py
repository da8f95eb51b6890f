"""Options of components, couplings and hybrids: what each accepts, where each one goes, and how a
name carries them: ``gerf-fixed(A=-0.25)@orf``, ``trig@simrf-plus(passes=3)``,
``gaussian-hybrid(sigma=0.5)`` (docs/methods.md#options-in-names)."""

from __future__ import annotations

import ast
import inspect
import re
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


#: ``head(key=value, ...)``: a component, hybrid or coupling name with options (the whole text)
_WITH_OPTIONS = re.compile(r"^\s*([^()@\s]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_BARE_WORD = re.compile(r"^[A-Za-z_][\w.-]*$")
SYNTAX = "name(option=value, ...)@weights(option=value, ...), each '(...)' optional"


class OptionSyntaxError(ValueError):
    """An estimator name whose options are not ``(key=value, ...)``."""


#: bare words that are numbers
_SPECIAL = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def _value(text: str, where: str) -> Any:
    """A literal (number, quoted string, True/False/None, complex, list), or a bare word."""
    text = text.strip()
    if text.lower() in _SPECIAL:
        return _SPECIAL[text.lower()]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        if _BARE_WORD.match(text):
            return text
        raise OptionSyntaxError(f"{where}: {text!r} is not a value") from None


def parse_part(text: str) -> tuple[str, dict[str, Any]]:
    """``"gerf-fixed(A=-0.25)"`` -> ("gerf-fixed", {"A": -0.25}); no parentheses: no options.

    Values are Python literals (``-0.25``, ``1j``, ``'text'``, ``True``, ``[1, 2]``) or bare
    words (``kmeans``). Raises :class:`OptionSyntaxError`.
    """
    found = _WITH_OPTIONS.match(text)
    if found is None:
        raise OptionSyntaxError(f"{text!r} is not {SYNTAX}")
    head, inside = found.group(1), found.group(2)
    options: dict[str, Any] = {}
    for item in split_outside_brackets(inside or ""):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise OptionSyntaxError(f"{text!r}: {item.strip()!r} is not option=value")
        if key in options:
            raise OptionSyntaxError(f"{text!r}: option {key!r} given twice")
        options[key] = _value(value, f"{text!r}, option {key!r}")
    return head, options


def split_outside_brackets(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside (), [] and quotes; blank parts dropped."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def format_part(head: str, options: dict[str, Any]) -> str:
    """The inverse of :func:`parse_part`: ``head(key=value, ...)`` or ``head``."""
    if not options:
        return head
    shown = (f"{k}={v}" if isinstance(v, str) and _BARE_WORD.match(v) else f"{k}={v!r}"
             for k, v in options.items())  # fmt: skip
    return f"{head}({', '.join(shown)})"
