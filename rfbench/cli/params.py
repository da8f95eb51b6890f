"""Command-line options for an experiment's parameters, from its parameter model: the naming rule
(plural lists with the singular accepted, math symbols keep their names), ``--x/--no-x`` booleans,
typed metavars and the ``[default: …; bounds]`` help are in docs/architecture.md#cli. Every option
defaults to None, so only the options a user gives override the experiment's defaults or profile.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import typer

from rfbench.compute.experiments.base import ConfigError
from rfbench.compute.features.options import split_outside_brackets

if TYPE_CHECKING:
    from rfbench.compute.experiments.params import ExperimentParams, Param

#: names of math symbols: a parameter whose last word is one of these or a single letter
#: (``r``, ``m``, ``crossover_d``, ``density_v``) keeps its name even when it takes a list
SYMBOLS = frozenset({"sigma", "theta", "mu", "lambda", "alpha", "beta", "rho", "tau", "subset"})
_TYPES: dict[str, type] = {"bool": bool, "int": int, "float": float}
#: the words a true and a false boolean value may be given as
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def flags(key: str, default: Any) -> tuple[str, ...]:
    """The option names of a parameter: the flag first, then its singular alias (lists only)."""
    dashed = "--" + key.replace("_", "-")
    last = key.rsplit("_", 1)[-1]  # a math symbol (one letter, SYMBOLS) keeps its name as a list
    if not isinstance(default, list | tuple) or len(last) == 1 or last in SYMBOLS:
        return (dashed,)
    if dashed.endswith("s"):
        return (dashed, dashed[:-1])
    return (dashed + "s", dashed)


def metavar(param: Param) -> str:
    """``INT``, ``FLOAT``, ``TEXT``; lists ``FLOAT[,FLOAT...]``; tables ``NAME=INT[,...]``."""
    if param.kind == "table":
        return "NAME=INT[,NAME=INT...]"
    name = param.kind.upper() if param.kind in _TYPES else "TEXT"
    return f"{name}[,{name}...]" if param.many else name


def shown(key: str, default: Any) -> str:
    """A default as the help shows it ("" for none)."""
    if isinstance(default, bool):
        return ("" if default else "no-") + key.replace("_", "-")
    if isinstance(default, list | tuple):
        return ", ".join(map(str, default))
    if isinstance(default, Mapping):
        return ",".join(f"{k}={v}" for k, v in default.items())
    return "" if default in ("", None) else str(default)


def help_text(param: Param) -> str:
    """The help of a parameter's option: its description, then ``[default: ...; bounds]``."""
    default = shown(param.key, param.default)
    facts = "; ".join(x for x in (default and f"default: {default}", param.constraint) if x)
    return f"{param.help} [{facts}]".strip() if facts else param.help.strip()


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
        default,
        *decls,
        help=help_text,
        metavar=metavar,
        show_default=default is not None and not isinstance(default, bool),
        rich_help_panel=panel,
    )
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=kind)


def parameter_options(params: Sequence[Param], taken: set[str]) -> list[inspect.Parameter]:
    """One option per parameter (default None: given options override only); a boolean is
    ``--x/--no-x``. An alias that another option's flag already takes is dropped (a list
    ``kernels`` keeps ``--kernels`` only when a scalar ``kernel`` owns ``--kernel``); two
    parameters claiming the same flag are an error of the experiment."""
    names = {p.key: flags(p.key, p.default) for p in params}
    owner: dict[str, str] = {flag: "(run option)" for flag in taken}
    for key, decls in names.items():
        if decls[0] in owner:
            raise ValueError(
                f"parameters {owner[decls[0]]!r} and {key!r} would both be {decls[0]}; rename one"
            )
        owner[decls[0]] = key
    options = []
    for p in params:
        if p.kind == "bool" and not p.many:
            flag = p.key.replace("_", "-")
            decls, kind, shown_as = (f"--{flag}/--no-{flag}",), bool | None, ""
        else:
            decls = tuple(d for i, d in enumerate(names[p.key]) if i == 0 or d not in owner)
            kind, shown_as = str | None, metavar(p)
        options.append(option(p.key, decls, kind, help_text(p), metavar=shown_as))
    return options


def parse_value(param: Param, text: str | bool) -> Any:
    """A command-line value as the parameter's type (lists: comma-separated, commas inside
    parentheses kept, as in ``gerf-fixed(A=-0.2, x=1)@orf``; tables: ``name=value,name=value``
    with integer values)."""
    if isinstance(text, bool):
        return text
    kind, flag = _TYPES.get(param.kind, str), flags(param.key, param.default)[0]
    if param.kind == "table":
        pairs = [part.partition("=") for part in text.split(",") if part.strip()]
        bad = next((k for k, sep, v in pairs if not sep or not k.strip()), None)
        if bad is not None:
            raise ConfigError(f"invalid value for '{flag}': {bad!r} (expected name=value,...)")
        keys = [k.strip() for k, _, _ in pairs]
        twice = next((k for k in keys if keys.count(k) > 1), None)
        if twice is not None:
            raise ConfigError(f"invalid value for '{flag}': {twice!r} is given twice")
        return {k.strip(): _scalar(flag, v.strip(), int) for k, _, v in pairs}
    if param.many:
        return [_scalar(flag, part.strip(), kind) for part in split_outside_brackets(text)]
    return _scalar(flag, text, kind)


def _scalar(flag: str, text: str, kind: type) -> Any:
    if kind is str:
        return text
    if kind is bool and text.lower() in _TRUE + _FALSE:
        return text.lower() in _TRUE
    if kind in (int, float):
        with contextlib.suppress(ValueError):
            return kind(text)
    raise ConfigError(f"invalid value for '{flag}': {text!r} (expected {kind.__name__})")


def renamed_options(
    model: type[ExperimentParams], fields: Mapping[str, Param]
) -> list[inspect.Parameter]:
    """The old flag of each renamed parameter (``--m`` for ``--projection-budgets``): parsed as
    the new one, renamed with a one-line notice when the config is resolved
    (``ExperimentParams.renamed``)."""
    out = []
    for old, new in model.renamed.items():
        flag = flags(new, fields[new].default)[0]
        text = f"old name of {flag}, accepted until the next release"
        out.append(option(old, flags(old, fields[new].default), str | None, text,
                          metavar=metavar(fields[new])))  # fmt: skip
    return out
