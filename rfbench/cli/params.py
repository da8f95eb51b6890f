"""Command-line options for an experiment's parameters (docs/architecture.md#cli).

One naming rule: parameter ``key`` becomes ``--key`` (underscores as dashes). A list parameter
named by a word takes the plural and accepts the singular as an alias (``dataset`` ->
``--datasets``/``--dataset``, ``regimes`` -> ``--regimes``/``--regime``). Math-symbol parameters
keep their names (``--r``, ``--m``, ``--sigma``, ``--density-v``, ``--subset``). Config (TOML) keys
stay the parameter names. Booleans are ``--x/--no-x`` flags. Other options show their type
(``INT``, ``FLOAT``, ``TEXT``; lists ``FLOAT[,FLOAT...]``, comma-separated). Every option defaults
to None, so only the options a user gives override the experiment's defaults or its profile.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Annotated, Any

import typer

from rfbench.experiments import ConfigError

#: names of math symbols: a parameter whose last word is one of these or a single letter
#: (``r``, ``m``, ``crossover_d``, ``density_v``) keeps its name even when it takes a list
SYMBOLS = frozenset({"sigma", "theta", "mu", "lambda", "alpha", "beta", "rho", "tau", "subset"})
_METAVARS = {bool: "BOOL", int: "INT", float: "FLOAT", str: "TEXT"}


def is_symbol(key: str) -> bool:
    """Whether a parameter is named by a math symbol (and so keeps its name as a list)."""
    last = key.rsplit("_", 1)[-1]
    return len(last) == 1 or last in SYMBOLS


def flags(key: str, default: Any) -> tuple[str, ...]:
    """The option names of a parameter: the flag first, then its singular alias (lists only)."""
    dashed = "--" + key.replace("_", "-")
    if not isinstance(default, list | tuple) or is_symbol(key):
        return (dashed,)
    if dashed.endswith("s"):
        return (dashed, dashed[:-1])
    return (dashed + "s", dashed)


def element_type(default: Any) -> type:
    """The type one value must have: a list's element type (ints promote to floats)."""
    if isinstance(default, list | tuple):
        if not default:
            return str
        return float if any(isinstance(v, float) for v in default) else type(default[0])
    return str if default is None else type(default)


def metavar(default: Any) -> str:
    """``INT``, ``FLOAT``, ``TEXT``; lists ``FLOAT[,FLOAT...]``; tables ``NAME=INT[,...]``."""
    if isinstance(default, Mapping):
        return "NAME=INT[,NAME=INT...]"
    name = _METAVARS.get(element_type(default), "TEXT")
    return f"{name}[,{name}...]" if isinstance(default, list | tuple) else name


def shown(key: str, default: Any) -> str:
    """A default as the help shows it ("" for none)."""
    if isinstance(default, bool):
        return ("" if default else "no-") + key.replace("_", "-")
    if isinstance(default, list | tuple):
        return ", ".join(map(str, default))
    if isinstance(default, Mapping):
        return ",".join(f"{k}={v}" for k, v in default.items())
    return "" if default in ("", None) else str(default)


def option(
    name: str,
    decls: tuple[str, ...],
    kind: Any,
    help_text: str,
    *,
    default: Any = None,
    metavar: str | None = None,
    panel: str | None = None,
) -> inspect.Parameter:
    """A keyword parameter of a synthesised command signature, declared as a Typer option."""
    info = typer.Option(
        *decls,
        help=help_text,
        metavar=metavar,
        show_default=default is not None and not isinstance(default, bool),
        rich_help_panel=panel,
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, info]
    )


def parameter_option(key: str, default: Any, help_text: str, decls: tuple[str, ...]) -> Any:
    """The option of one experiment parameter (default None: given options override only)."""
    default_text = shown(key, default)
    text = f"{help_text} [default: {default_text}]" if default_text else help_text
    if isinstance(default, bool):
        dashed = key.replace("_", "-")
        return option(key, (f"--{dashed}/--no-{dashed}",), bool | None, text.strip(), metavar="")
    return option(key, decls, str | None, text.strip(), metavar=metavar(default))


def parameter_options(
    defaults: Mapping[str, Any], helps: Mapping[str, str], taken: set[str]
) -> list[inspect.Parameter]:
    """One option per parameter. An alias that another option's flag already takes is dropped
    (a list ``kernels`` keeps ``--kernels`` only when a scalar ``kernel`` owns ``--kernel``); two
    parameters claiming the same flag are an error of the experiment."""
    names = {key: flags(key, default) for key, default in defaults.items()}
    owner: dict[str, str] = {flag: "(run option)" for flag in taken}
    for key, decls in names.items():
        if decls[0] in owner:
            raise ValueError(
                f"parameters {owner[decls[0]]!r} and {key!r} would both be {decls[0]}; rename one"
            )
        owner[decls[0]] = key
    params = []
    for key, default in defaults.items():
        decls = tuple(d for i, d in enumerate(names[key]) if i == 0 or d not in owner)
        params.append(parameter_option(key, default, helps.get(key, ""), decls))
    return params


def parse_value(key: str, text: str | bool, default: Any) -> Any:
    """A command-line value as the type of the parameter's default (lists: comma-separated;
    tables: ``name=value,name=value`` with integer values)."""
    if isinstance(text, bool):
        return text
    kind, flag = element_type(default), flags(key, default)[0]
    if isinstance(default, Mapping):
        pairs = [part.partition("=") for part in text.split(",") if part.strip()]
        bad = next((k for k, sep, v in pairs if not sep or not k.strip()), None)
        if bad is not None:
            raise ConfigError(f"invalid value for '{flag}': {bad!r} (expected name=value,...)")
        keys = [k.strip() for k, _, _ in pairs]
        twice = next((k for k in keys if keys.count(k) > 1), None)
        if twice is not None:
            raise ConfigError(f"invalid value for '{flag}': {twice!r} is given twice")
        return {k.strip(): _scalar(flag, v.strip(), int) for k, _, v in pairs}
    if isinstance(default, list | tuple):
        return [_scalar(flag, part.strip(), kind) for part in text.split(",") if part.strip()]
    return _scalar(flag, text, kind)


def _scalar(flag: str, text: str, kind: type) -> Any:
    if kind is bool:
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
    elif kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    else:
        return text
    raise ConfigError(f"invalid value for '{flag}': {text!r} (expected {kind.__name__})")
