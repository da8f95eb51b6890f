"""Entries of the reference data: their models, the match/check vocabulary, validation.

:func:`make_entry` turns one raw TOML table into a validated :class:`NumberEntry`,
:class:`ClaimEntry` or :class:`ErratumEntry` (pydantic dataclasses; a claim's check is one model
per kind of :data:`CHECKS`, told apart by ``kind``); every problem raises
:class:`ReferenceDataError` naming the file and the entry, in the words of :func:`_say`. The
vocabulary is documented in :mod:`rfbench.present.reference`.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Literal, Union

import pydantic
from pydantic.dataclasses import dataclass

from rfbench.compute.results import PARAMETER_COLUMNS

PAPERS: tuple[str, ...] = ("hrf", "simrf", "derf", "cse", "spectraformer", "vrc")
KINDS: tuple[str, ...] = ("number", "claim", "erratum")

#: Keys of a ``match`` table / check selector besides the result parameter columns.
CORE_KEYS = frozenset(
    {"experiment", "figure", "estimator", "kernel", "metric", "baseline", "derive", "aggregate"}
)
MATCH_KEYS = CORE_KEYS | frozenset(PARAMETER_COLUMNS) | {"std_metric"}
#: A side's declared upper bound on the true value of its statistic (``less_than`` lhs only,
#: with ``bound_reason``): it decides a comparison the side's sample cannot resolve.
BOUND_KEYS = frozenset({"upper_bound"})
DERIVE = ("value", "difference", "ratio")
AGGREGATE = re.compile(r"^(?:(min|max|mean|sum) over|at (min|max)) ([a-z_]+)$")
ID = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")
EXPR_NAMES = frozenset({"exp", "log", "sqrt", "sin", "cos", "pi", "e"})
#: The values a key may take (an entry's, or a check's).
CHOICES = {
    "category": ("formula", "text", "notation", "inconsistency"),
    "expect": ("pass", "fail", "unknown"),
    "evidence": ("sampled", "replayed"),
    "best": ("min", "max"),
    "toward": ("min", "max"),
    "direction": ("increasing", "decreasing"),
}

TOLERANCES = {"abs_tol", "rel_tol", "n_stderr"}
#: Check kinds: (required keys, optional keys) besides the common ones (:class:`Check`'s fields).
CHECKS: dict[str, tuple[set[str], set[str]]] = {
    "ordering": ({"order"}, {"by", "strict", "min_gap", "effect_reason"}),
    "less_than": (
        set(),
        set("lhs lhs_value rhs rhs_value rhs_expr strict bound_reason".split()),
    ),
    "ratio_at_least": ({"numerator", "denominator"}, {"at_least", "at_least_log", "log_values"}),
    "equals_within": (set(), set("lhs rhs value value_expr number numbers".split()) | TOLERANCES),
    "count": (
        {"estimator", "best", "for_each", "at_least_fraction"},
        {"by", "abs_tol", "range_tol", "panel"},
    ),
    "monotone": ({"select", "along", "direction"}, {"strict"}),
    "limit": ({"select", "along", "toward"}, {"value", "value_expr", "abs_tol", "rel_tol"}),
    "manual": ({"reason"}, set()),
}
#: The side selectors of a check (each narrows the group's rows; see
# :mod:`rfbench.present.reference`).
SIDES = ("lhs", "rhs", "numerator", "denominator", "select")
#: The keys of a check that hold a list of strings.
LISTS = ("for_each", "order", "numbers", "panel")


class ReferenceDataError(ValueError):
    """A reference TOML file is malformed; the message names the file and the entry."""


def _check_expr(expr: Any) -> str:
    if not isinstance(expr, str):
        raise ValueError(f"expression must be a string, got {expr!r}")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"bad expression {expr!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in EXPR_NAMES | MATCH_KEYS:
            raise ValueError(f"unknown name {node.id!r} in expression {expr!r}")
        if isinstance(node, ast.Attribute | ast.Subscript | ast.Lambda):
            raise ValueError(f"only arithmetic and functions allowed in {expr!r}")
    return expr


def _check_selector(sel: Any, what: str, bounds: frozenset[str] = frozenset()) -> None:
    """Refuse a selector named ``what`` (unknown keys, values other than scalars, a bad derive or
    aggregate); the keys ``bounds`` pass unchecked."""
    if not isinstance(sel, Mapping):
        raise ValueError(f"{what} must be a table, got {sel!r}")
    unknown = sorted(set(sel) - MATCH_KEYS - bounds)
    if unknown:
        raise ValueError(f"unknown {what} key(s) {unknown}; allowed: {sorted(MATCH_KEYS)}")
    for key, val in sel.items():
        scalars = val if isinstance(val, list) else [val]
        if key not in bounds and not (
            scalars and all(isinstance(v, str | int | float | bool) for v in scalars)
        ):
            raise ValueError(f"{what}.{key} must be a scalar or a list of scalars")
    if "derive" in sel:
        if sel["derive"] not in DERIVE:
            raise ValueError(f"{what}.derive must be one of {DERIVE}")
        if (sel["derive"] != "value") != ("baseline" in sel):
            raise ValueError(f"{what}: 'baseline' goes with derive = difference | ratio")
    if "aggregate" in sel and not AGGREGATE.match(str(sel["aggregate"])):
        raise ValueError(f"{what}.aggregate {sel['aggregate']!r}: use 'max over theta' etc.")


def _selector(sel: Any, info: pydantic.ValidationInfo) -> Mapping[str, Any]:
    """A ``match`` table (a dict) or a check's selector (read-only), checked."""
    name = info.field_name
    if name == "match":
        _check_selector(sel, "match")
        return dict(sel)
    bound = name == "lhs" and info.data.get("kind") == "less_than"
    _check_selector(sel, f"check.{name}", BOUND_KEYS if bound else frozenset())
    return MappingProxyType(dict(sel))


Selector = Annotated[Mapping[str, Any], pydantic.PlainValidator(_selector)]
Number = pydantic.StrictFloat | pydantic.StrictInt
Text = Annotated[str, pydantic.Field(min_length=1)]
#: The type of each key of :data:`CHECKS` (any other key: a number).
KEY_TYPES: dict[str, Any] = {
    **dict.fromkeys(SIDES, Selector),
    **dict.fromkeys("by estimator along reason number bound_reason effect_reason".split(), str),
    **dict.fromkeys(
        ("rhs_expr", "value_expr"), Annotated[str, pydantic.PlainValidator(_check_expr)]
    ),
    **dict.fromkeys(LISTS, list[str]),
    "for_each": tuple[str, ...],
    **dict.fromkeys(("strict", "log_values"), bool),
    **{key: Literal[values] for key, values in CHOICES.items()},
    "at_least_fraction": Annotated[float, pydantic.Field(ge=0.0, le=1.0)],
}


class Check(pydantic.BaseModel, Mapping[str, Any]):  # type: ignore[misc]
    """A claim's check, validated once: typed attributes for what every rule reads and a read-only
    mapping of the keys the check gives. Its fields are the keys every kind may give; the model
    of each kind of :data:`CHECKS` (:data:`KIND_MODELS`) adds the kind's own keys."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    kind: str
    experiment: str | None = None
    metric: str | None = None
    figure: str | None = None
    where: Selector = pydantic.Field(default_factory=lambda: MappingProxyType({}))
    for_each: tuple[str, ...] = ()
    aggregate: Annotated[
        str | None,
        pydantic.PlainValidator(lambda v: _check_selector({"aggregate": v}, "check") or v),
    ] = None
    #: compare closed forms where rows have them
    theory_metric: str | None = None
    #: take standard errors of a bias from the closed-form MSE
    theory_stderr: str | None = None

    @pydantic.model_validator(mode="after")
    def _together(self) -> Check:
        given, kind = self.model_fields_set, self.kind
        if kind != "manual" and not (
            {"experiment", "metric"} <= given or {"number", "numbers"} & given
        ):
            raise ValueError("a check needs experiment and metric (or number/numbers)")
        for group in (("lhs", "lhs_value"), ("rhs", "rhs_value", "rhs_expr")):
            if kind == "less_than" and len(given & set(group)) != 1:
                raise ValueError(f"less_than needs exactly one of {group}")
        if "lhs" in given and kind == "less_than":
            if ("upper_bound" in self["lhs"]) != ("bound_reason" in given):
                raise ValueError("lhs.upper_bound goes with check.bound_reason")
        if kind in ("equals_within", "limit") and not TOLERANCES & given:
            raise ValueError(f"{kind} needs abs_tol, rel_tol or n_stderr")
        if ("min_gap" in given) != ("effect_reason" in given):
            raise ValueError("min_gap (a declared effect size) goes with effect_reason")
        if kind == "ratio_at_least" and ("at_least" in given) == ("at_least_log" in given):
            raise ValueError("ratio_at_least needs exactly one of at_least, at_least_log")
        return self

    @property
    def sides(self) -> Mapping[str, Mapping[str, Any]]:
        """The side selectors the check gives (of :data:`SIDES`)."""
        return MappingProxyType({k: self[k] for k in SIDES if k in self})

    def __getitem__(self, key: str) -> Any:
        if key not in self.model_fields_set:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # a mapping's keys
        return (k for k in type(self).model_fields if k in self.model_fields_set)

    def __len__(self) -> int:
        return len(self.model_fields_set)


#: The model of each check kind: its own keys typed by :data:`KEY_TYPES`.
KIND_MODELS = {
    kind: pydantic.create_model(  # type: ignore[call-overload]
        kind,
        __base__=Check,
        kind=(Literal[kind], ...),
        **{k: (KEY_TYPES.get(k, Number), ...) for k in required},
        **{k: (KEY_TYPES.get(k, Number) | None, None) for k in optional},
    )
    for kind, (required, optional) in CHECKS.items()
}
AnyCheck = Annotated[Union[tuple(KIND_MODELS.values())], pydantic.Field(discriminator="kind")]  # noqa: UP007


@dataclass(frozen=True, kw_only=True, config=pydantic.ConfigDict(extra="forbid"))
class Entry:
    """Common fields: a stable ``id``, the ``paper`` and the ``source`` (where in the paper)."""

    kind: ClassVar[str]
    id: Annotated[str, pydantic.Field(pattern=r"\S")]
    paper: str
    source: Annotated[str, pydantic.Field(pattern=r"\S")]
    figure: str = ""
    note: str = ""
    spec_ref: str = ""

    @pydantic.model_validator(mode="after")
    def _together(self) -> Entry:
        paper, get = self.paper, lambda key: getattr(self, key, None)
        if not ID.match(self.id) or not self.id.startswith(paper + "-"):
            raise ValueError(f"id must match {ID.pattern} and start with '{paper}-'")
        if self.figure and not self.figure.startswith(paper + "-"):
            raise ValueError(f"figure {self.figure!r} must start with '{paper}-'")
        if self.kind == "number" and get("reproducible"):
            if not {"experiment", "metric"} <= set(get("match")) or not self.figure:
                raise ValueError("a reproducible number needs figure and match.experiment/metric")
        if get("plausible") and not get("unstated"):
            raise ValueError("plausible goes with unstated (the setting the value hinges on)")
        if get("reading_of") and not get("reading"):
            raise ValueError("reading_of needs reading (which reading this entry uses)")
        if get("weaker") and not get("reading_of"):
            raise ValueError("weaker goes with reading_of (a weaker reading of another claim)")
        if get("reproducible") is False and not get("reason"):
            raise ValueError("reproducible = false needs a reason")
        return self


@dataclass(frozen=True, kw_only=True)
class NumberEntry(Entry):
    """A published number (its fields: :mod:`rfbench.present.reference`); ``value * scale`` is in
    the units of our ``match`` metric."""

    kind: ClassVar[str] = "number"
    quantity: str = ""
    value: pydantic.StrictFloat
    std: pydantic.StrictFloat | None = None
    stderr: pydantic.StrictFloat | None = None
    unit: str = ""
    scale: pydantic.StrictFloat = 1.0
    match: Selector = pydantic.Field(default_factory=dict)
    reproducible: bool = True
    reason: str = ""
    spec_note: str = ""
    evidence: Literal[CHOICES["evidence"]] = "sampled"  # type: ignore[valid-type]
    reading: str = ""
    reading_of: str = ""
    second_of: str = ""
    unstated: str = ""
    plausible: tuple[()] | tuple[float, float] = ()
    ratio_to: str = ""

    @property
    def scaled(self) -> float:
        """The published value in the units of our metric (``value * scale``)."""
        return self.value * self.scale


@dataclass(frozen=True, kw_only=True)
class ClaimEntry(Entry):
    """A qualitative claim with a machine-checkable ``check`` (see
    :mod:`rfbench.present.reference`), parsed into a :class:`Check` of its kind."""

    kind: ClassVar[str] = "claim"
    statement: Text
    check: AnyCheck
    reproducible: bool = True
    reason: str = ""
    spec_note: str = ""
    expect: Literal[CHOICES["expect"]] = "pass"  # type: ignore[valid-type]
    reading: str = ""
    reading_of: str = ""
    #: with ``reading_of``: a weaker reading than the sentence states (its verdict is shown
    #: beside the primary's but never makes the claim *depend on the reading*)
    weaker: bool = False


@dataclass(frozen=True, kw_only=True)
class ErratumEntry(Entry):
    """A typo or inconsistency in the paper: ``printed`` form, ``corrected`` form, its size."""

    kind: ClassVar[str] = "erratum"
    printed: Text
    corrected: Text
    magnitude: str = ""
    category: Literal[CHOICES["category"]] = "formula"  # type: ignore[valid-type]
    checked_by: str = ""


CLASSES: dict[str, type[Entry]] = {c.kind: c for c in (NumberEntry, ClaimEntry, ErratumEntry)}
#: The one message of a problem with these fields, whatever pydantic found.
FIELD_MESSAGES = {
    "statement": "missing statement",
    "printed": "an erratum needs printed and corrected",
    "corrected": "an erratum needs printed and corrected",
    "plausible": "plausible must be [low, high]",
    "at_least_fraction": "check.at_least_fraction must be in [0, 1]",
    **{key: f"check.{key} must be a list of strings" for key in LISTS[:3]},
}
UNKNOWN = ("extra_forbidden", "unexpected_keyword_argument")


def _say(exc: pydantic.ValidationError, raw: Mapping[str, Any]) -> str:
    """The first problem pydantic found in the entry ``raw``, in the house's words."""
    errors = exc.errors()
    top = [str(e["loc"][0]) for e in errors if e["type"] in UNKNOWN and len(e["loc"]) == 1]
    error = min(errors, key=lambda e: (e["loc"][:1] not in (("id",), ("source",)), not top))
    loc, kind = tuple(map(str, error["loc"])), error["type"]
    inside = loc[:1] == ("check",)
    key = loc[2] if inside and len(loc) > 2 else loc[0] if loc else ""
    if key in ("id", "source"):
        return f"missing or empty {key!r}"
    if top:
        return f"unknown field(s) {sorted(top)}"
    if loc == ("check",):
        return f"check.kind must be one of {sorted(CHECKS)}"
    inner = [e for e in errors if e["loc"][:1] == ("check",) and len(e["loc"]) == 3]
    missing = sorted(str(e["loc"][2]) for e in inner if e["type"] == "missing")
    unknown = sorted(str(e["loc"][2]) for e in inner if e["type"] in UNKNOWN)
    if missing or unknown:
        return f"{loc[1]} check: missing {missing}, unknown {unknown}"
    if kind == "value_error":
        return str(error["ctx"]["error"])
    if key in FIELD_MESSAGES:
        return FIELD_MESSAGES[key]
    if key in ("value", "std", "stderr", "scale") and not inside:
        return f"{key} must be a number, got {raw.get(key)!r}"
    if kind == "literal_error":
        got = f", got {error['input']!r}" if inside else ""
        return f"{'check.' if inside else ''}{key} must be one of {CHOICES[key]}{got}"
    return f"{'check.' if inside else ''}{key}: {error['msg']}"


def make_entry(kind: str, raw: dict[str, Any], paper: str, fname: str) -> Entry:
    """A validated entry of ``kind`` from the raw table ``raw`` of ``paper``'s file ``fname``."""
    where = f"{fname}: {kind} {raw.get('id', '<no id>')!r}"
    if "paper" in raw:
        raise ReferenceDataError(f"{where}: unknown field(s) ['paper']")
    try:
        return CLASSES[kind](**raw, paper=paper)
    except pydantic.ValidationError as exc:
        raise ReferenceDataError(f"{where}: {_say(exc, raw)}") from None


def evaluate_expr(expr: str, params: dict[str, float]) -> float:
    """Evaluate a check expression (e.g. ``"exp(2*r**2)/sqrt(2*m)"``) at parameter values."""
    try:
        _check_expr(expr)
    except ValueError as exc:
        raise ReferenceDataError(f"expression: {exc}") from None
    names = {name: getattr(math, name) for name in EXPR_NAMES}
    return float(eval(compile(ast.parse(expr, mode="eval"), "<expr>", "eval"), {}, names | params))
