"""Experiment parameters declared once, one pydantic model each (docs/architecture.md#parameters:
the value rules and what is derived from the model).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from rfbench.compute.checks import UserError

T = TypeVar("T")
_log = logging.getLogger("rfbench.params")

__all__ = [
    "ExperimentParams",
    "Listed",
    "Param",
    "Values",
    "config_error",
    "describe",
    "renamed",
    "resolve",
]


class ConfigError(UserError):
    """A bad configuration value; the message names the value and what is allowed.

    The CLI reports it in one line with exit status 2 (docs/architecture.md#cli).
    """

    @classmethod
    def bad_value(cls, key: str, value: Any, allowed: str) -> ConfigError:
        """``invalid value for 'key': value (allowed: ...)``."""
        return cls(f"invalid value for {key!r}: {value!r} (allowed: {allowed})")


def _as_list(value: Any) -> Any:
    """A single value as a one-element list (tuples as lists)."""
    return list(value) if isinstance(value, list | tuple) else [value]


def _distinct(values: list[Any]) -> list[Any]:
    seen: set[str] = set()
    for value in values:
        if repr(value) in seen:
            raise PydanticCustomError("listed_twice", "{value} is listed twice", {"value": value})
        seen.add(repr(value))
    return values


#: a list parameter whose values may repeat (e.g. two sizes); a single value is a list of one
Listed = Annotated[list[T], BeforeValidator(_as_list)]
#: a list parameter of distinct values (a repeated value would repeat jobs); a single value is a
#: list of one
Values = Annotated[
    list[T],
    BeforeValidator(_as_list),
    AfterValidator(_distinct),
    Field(json_schema_extra={"uniqueItems": True}),
]


class ExperimentParams(BaseModel):
    """Base of the experiments' parameter models: unknown keys are errors, types are strict (an
    integer is a float's value), floats are finite and the defaults are validated too."""

    model_config = ConfigDict(
        extra="forbid", strict=True, allow_inf_nan=False, validate_default=True, frozen=True
    )

    #: old name -> new name of a renamed parameter: the old name is still accepted, in config
    #: files and on the command line, with a one-line notice, for one release
    renamed: ClassVar[Mapping[str, str]] = {}


# --------------------------------------------------------------------------- introspection

_NOUNS = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
          "table": "a table", "any": "a value"}  # fmt: skip


@dataclass(frozen=True)
class Param:
    """What the CLI, the docs and the error messages need to know of one parameter."""

    key: str
    #: the type of one value: ``int``, ``float``, ``str``, ``bool``, ``table`` or ``any``
    kind: str
    #: a list parameter
    many: bool
    #: a list that rejects a value given twice
    distinct: bool
    #: the validated default (lists as lists)
    default: Any
    help: str
    #: allowed values (``Literal``), else empty
    choices: tuple[Any, ...] = ()
    #: bounds of one value (of a table: of one entry): (op, limit), op one of >=, >, <=, <
    bounds: tuple[tuple[str, Any], ...] = ()
    #: the length bounds of a list (None: unbounded)
    min_items: int | None = None
    max_items: int | None = None
    #: the type of a table's entries (``int`` or ``any``)
    entry: str = "any"
    #: a rule a validator enforces beyond the bounds, for people (``Field(json_schema_extra=
    #: {"rule": "0, or >= 2"})``); it replaces the bounds in :attr:`constraint`
    rule: str = ""

    @property
    def type_name(self) -> str:
        """``int``, ``list[float]``, ``table[str, int]``."""
        if self.kind == "table":
            return "table" if self.entry == "any" else f"table[str, {self.entry}]"
        return f"list[{self.kind}]" if self.many else self.kind

    def _limits(self) -> str:
        """``>= 2``, ``> 0``, ``from 1 to 2``."""
        bounds = dict(self.bounds)
        if set(bounds) == {">=", "<="}:
            return f"from {_number(bounds['>='])} to {_number(bounds['<='])}"
        return " and ".join(f"{op} {_number(v)}" for op, v in self.bounds)

    def expected(self) -> str:
        """What one value (one entry of a table) must be: ``an integer >= 2``, ``softmax,
        gaussian``."""
        if self.choices:
            return ", ".join(map(str, self.choices))
        noun = _NOUNS[self.entry if self.kind == "table" else self.kind]
        return f"{noun} {self._limits()}".strip()

    def length(self) -> str:
        """``non-empty``, ``2 values``, ``at least 3 values`` ('' for no length bound)."""
        low, high = self.min_items or 0, self.max_items
        if high is not None and low == high:
            return f"{low} values"
        text = {0: "", 1: "non-empty"}.get(low, f"at least {low} values")
        return f"{text}, at most {high} values".lstrip(", ") if high is not None else text

    @property
    def constraint(self) -> str:
        """The bounds and choices for people: ``>= 2``, ``each > 0; non-empty``,
        ``one of: softmax, gaussian`` ('' for none)."""
        parts = []
        if self.rule:
            parts.append(self.rule)
        elif self.choices:
            parts.append(("any of: " if self.many else "one of: ") + self.expected())
        elif self.bounds:
            each = self.many or self.kind == "table"
            parts.append(f"each {self._limits()}" if each else self._limits())
        if self.many and self.length():
            parts.append(self.length())
        return "; ".join(parts)


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


_KINDS = {"integer": "int", "number": "float", "string": "str", "boolean": "bool"}
_BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}


def _value(schema: Mapping[str, Any]) -> dict[str, Any]:
    """kind, choices and bounds of one value, from its JSON schema."""
    return {
        "kind": _KINDS.get(schema.get("type", ""), "any"),
        "choices": tuple(schema.get("enum", ())),
        "bounds": tuple((op, schema[name]) for name, op in _BOUNDS.items() if name in schema),
    }


def _param(key: str, schema: Mapping[str, Any], default: Any) -> Param:
    """The :class:`Param` of one property of a model's JSON schema."""
    common = {"key": key, "default": default, "help": schema.get("description", ""),
              "rule": str(schema.get("rule", ""))}  # fmt: skip
    if schema.get("type") == "array":
        return Param(**common, many=True, distinct=schema.get("uniqueItems", False),
                     min_items=schema.get("minItems"), max_items=schema.get("maxItems"),
                     **_value(schema.get("items", {})))  # fmt: skip
    if schema.get("type") == "object":
        entries = schema.get("additionalProperties")
        entry = _value(entries if isinstance(entries, Mapping) else {})
        return Param(**common, kind="table", many=False, distinct=False, bounds=entry["bounds"],
                     entry=entry["kind"])  # fmt: skip
    return Param(**common, many=False, distinct=False, **_value(schema))


@functools.cache
def _properties(model: type[ExperimentParams]) -> dict[str, Any]:
    """key -> JSON schema of every field of ``model`` (pydantic's ``model_json_schema``)."""
    return model.model_json_schema().get("properties", {})


@functools.cache
def describe(model: type[ExperimentParams]) -> dict[str, Param]:
    """key -> :class:`Param` of every field of ``model``, in declaration order."""
    defaults = resolve(model, {}, model.__name__)
    return {key: _param(key, schema, defaults[key]) for key, schema in _properties(model).items()}


# --------------------------------------------------------------------------- validation

_TYPE_ERRORS = {
    "int_type": "int", "int_parsing": "int", "int_from_float": "int",
    "float_type": "float", "float_parsing": "float",
    "bool_type": "bool", "bool_parsing": "bool",
    "string_type": "str", "dict_type": "table",
}  # fmt: skip
_BOUND_ERRORS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal")


def config_error(
    exc: ValidationError, model: type[ExperimentParams], experiment: str
) -> ConfigError:
    """One :class:`ConfigError` line for a failed validation: the unknown keys, else the first
    error's key (its ``loc``), value (its input) and what is expected."""
    errors = exc.errors()
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
    if unknown:
        allowed = ", ".join(_properties(model)) or "none"
        return ConfigError(
            f"unknown parameter(s) {', '.join(map(repr, unknown))} for experiment "
            f"{experiment!r} (allowed: {allowed})"
        )
    error = errors[0]
    raised = error.get("ctx", {}).get("error")
    if isinstance(raised, ConfigError):  # a validator's own one-line message
        return raised
    loc, value, kind = error["loc"], error["input"], error["type"]
    if not loc or str(loc[0]) not in _properties(model):
        return ConfigError(f"invalid config for experiment {experiment!r}: {error['msg']}")
    key = str(loc[0])
    param = _param(key, _properties(model)[key], None)
    if len(loc) > 1 and isinstance(loc[1], str):  # an entry of a table
        value = {loc[1]: value}
    if kind == "listed_twice":
        twice = error["ctx"]["value"]
        return ConfigError(
            f"invalid value for {key!r}: {twice!r} is listed twice (each value once)"
        )
    return ConfigError.bad_value(key, value, _expectation(kind, param, error))


def _expectation(kind: str, param: Param, error: Any) -> str:
    if kind == "finite_number":
        return "a finite number"
    if kind in _TYPE_ERRORS:
        return _NOUNS[_TYPE_ERRORS[kind]]
    if kind == "literal_error":
        return ", ".join(map(str, param.choices))
    if kind in ("too_short", "too_long"):
        return (
            f"a list of {param.length()}" if param.length() != "non-empty" else "a non-empty list"
        )
    if kind in _BOUND_ERRORS:
        return param.expected()
    return str(error["msg"]).lower()


def renamed(
    model: type[ExperimentParams], values: Mapping[str, Any], experiment: str
) -> dict[str, Any]:
    """``values`` with each old name of :attr:`ExperimentParams.renamed` given as its new name (a
    one-line notice on the ``rfbench.params`` logger); both names given is a :class:`ConfigError`.
    """
    out = dict(values)
    for old, new in model.renamed.items():
        if old not in out:
            continue
        if new in out:
            raise ConfigError(
                f"both {new!r} and its old name {old!r} are given for experiment {experiment!r} "
                f"(give {new!r} only)"
            )
        _log.warning(
            f"rfbench: {old!r} of experiment {experiment!r} is now called {new!r} (the old name is "
            "accepted until the next release)"
        )
        out[new] = out.pop(old)
    return out


def resolve(
    model: type[ExperimentParams], values: Mapping[str, Any], experiment: str
) -> dict[str, Any]:
    """``values`` validated by ``model`` (old names :func:`renamed`), missing keys at their
    defaults (declaration order)."""
    values = renamed(model, values, experiment)
    try:
        return model.model_validate(dict(values)).model_dump()
    except ValidationError as exc:
        raise config_error(exc, model, experiment) from None
