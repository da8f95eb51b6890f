"""Entries of the reference data: their dataclasses, the match/check vocabulary, validation.

:func:`make_entry` turns one raw TOML table into a validated :class:`NumberEntry`,
:class:`ClaimEntry` or :class:`ErratumEntry`; every problem raises :class:`ReferenceDataError`
naming the file and the entry. The vocabulary is documented in :mod:`rfbench.present.reference`.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

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
CATEGORIES = ("formula", "text", "notation", "inconsistency")
EXPECT = ("pass", "fail", "unknown")
EVIDENCE = ("sampled", "replayed")
EXPR_NAMES = frozenset({"exp", "log", "sqrt", "sin", "cos", "pi", "e"})

TOLERANCES = {"abs_tol", "rel_tol", "n_stderr"}
#: Check kinds: (required keys, optional keys) besides the common ones.
CHECK_COMMON = {"kind", "experiment", "metric", "figure", "where", "for_each", "aggregate"}
#: Optional everywhere: compare closed forms where rows have them (``theory_metric``), take
#: standard errors of a bias from the closed-form MSE (``theory_stderr``).
CHECK_COMMON |= {"theory_metric", "theory_stderr"}
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
CHOICES = {
    "best": ("min", "max"),
    "toward": ("min", "max"),
    "direction": ("increasing", "decreasing"),
}


class ReferenceDataError(ValueError):
    """A reference TOML file is malformed; the message names the file and the entry."""


@dataclass(frozen=True)
class Entry:
    """Common fields: a stable ``id``, the ``paper`` and the ``source`` (where in the paper)."""

    id: str
    paper: str
    source: str
    kind: str
    figure: str = ""
    note: str = ""
    spec_ref: str = ""


@dataclass(frozen=True)
class NumberEntry(Entry):
    """A published number (its fields: :mod:`rfbench.present.reference`); ``value * scale`` is in
    the units of our ``match`` metric."""

    quantity: str = ""
    value: float = math.nan
    std: float | None = None
    stderr: float | None = None
    unit: str = ""
    scale: float = 1.0
    match: dict[str, Any] = field(default_factory=dict)
    reproducible: bool = True
    reason: str = ""
    spec_note: str = ""
    evidence: str = "sampled"
    reading: str = ""
    reading_of: str = ""
    second_of: str = ""
    unstated: str = ""
    plausible: tuple[float, ...] = ()
    ratio_to: str = ""

    @property
    def scaled(self) -> float:
        """The published value in the units of our metric (``value * scale``)."""
        return self.value * self.scale


#: The side selectors of a check (each narrows the group's rows; see
# :mod:`rfbench.present.reference`).
SIDES = ("lhs", "rhs", "numerator", "denominator", "select")


class Check(Mapping[str, Any]):
    """A claim's check, validated once (:class:`ReferenceDataError`): typed attributes for what
    every rule reads and a read-only mapping of every key for the per-kind parameters."""

    def __init__(self, raw: Mapping[str, Any], where: str = "check") -> None:
        _check_claim(where, dict(raw))
        frozen = {k: _freeze(v) for k, v in raw.items()}
        self._raw: Mapping[str, Any] = MappingProxyType(frozen)
        self.kind: str = str(raw["kind"])
        self.experiment: str | None = raw.get("experiment")
        self.metric: str | None = raw.get("metric")
        self.where: Mapping[str, Any] = frozen.get("where", MappingProxyType({}))
        self.for_each: tuple[str, ...] = tuple(raw.get("for_each", ()))
        self.aggregate: str | None = raw.get("aggregate")
        self.theory_metric: str | None = raw.get("theory_metric")
        self.theory_stderr: str | None = raw.get("theory_stderr")
        self.sides: Mapping[str, Mapping[str, Any]] = MappingProxyType(
            {k: frozen[k] for k in SIDES if k in frozen}
        )

    @classmethod
    def parse(cls, raw: Any, where: str = "check") -> Check:
        """A :class:`Check` from a raw table (a ``Check`` is returned as is)."""
        if isinstance(raw, Check):
            return raw
        if not isinstance(raw, Mapping):
            raise _fail(where, f"check must be a table, got {raw!r}")
        return cls(raw, where)

    def __getitem__(self, key: str) -> Any:
        return self._raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._raw) == dict(other)

    def __hash__(self) -> int:
        return hash(repr(sorted(self._raw.items(), key=lambda kv: kv[0])))

    def __repr__(self) -> str:
        return f"Check({dict(self._raw)!r})"


def _freeze(value: Any) -> Any:
    """Tables of a check become read-only mappings (lists stay lists of scalars)."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    return value


@dataclass(frozen=True)
class ClaimEntry(Entry):
    """A qualitative claim with a machine-checkable ``check`` (see
    :mod:`rfbench.present.reference`);
    the check is parsed into a :class:`Check` when the entry is made."""

    statement: str = ""
    check: Check = field(default_factory=lambda: Check({"kind": "manual", "reason": "none"}))
    reproducible: bool = True
    reason: str = ""
    spec_note: str = ""
    expect: str = "pass"
    reading: str = ""
    reading_of: str = ""
    #: with ``reading_of``: a weaker reading than the sentence states (its verdict is shown
    #: beside the primary's but never makes the claim *depend on the reading*)
    weaker: bool = False

    def __post_init__(self) -> None:
        where = f"{self.paper}.toml: claim {self.id!r}"
        object.__setattr__(self, "check", Check.parse(self.check, where))


@dataclass(frozen=True)
class ErratumEntry(Entry):
    """A typo or inconsistency in the paper: ``printed`` form, ``corrected`` form, its size."""

    printed: str = ""
    corrected: str = ""
    magnitude: str = ""
    category: str = "formula"
    checked_by: str = ""


CLASSES: dict[str, type[Entry]] = {
    "number": NumberEntry,
    "claim": ClaimEntry,
    "erratum": ErratumEntry,
}


def evaluate_expr(expr: str, params: dict[str, float]) -> float:
    """Evaluate a check expression (e.g. ``"exp(2*r**2)/sqrt(2*m)"``) at parameter values."""
    _check_expr("expression", expr)
    names = {"exp": math.exp, "log": math.log, "sqrt": math.sqrt, "sin": math.sin}
    names |= {"cos": math.cos, "pi": math.pi, "e": math.e}
    return float(eval(compile(ast.parse(expr, mode="eval"), "<expr>", "eval"), {}, names | params))


def _fail(where: str, message: str) -> ReferenceDataError:
    return ReferenceDataError(f"{where}: {message}")


def _check_expr(where: str, expr: Any) -> None:
    if not isinstance(expr, str):
        raise _fail(where, f"expression must be a string, got {expr!r}")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise _fail(where, f"bad expression {expr!r}: {exc.msg}") from None
    allowed = EXPR_NAMES | MATCH_KEYS
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in allowed:
            raise _fail(where, f"unknown name {node.id!r} in expression {expr!r}")
        if isinstance(node, ast.Attribute | ast.Subscript | ast.Lambda):
            raise _fail(where, f"only arithmetic and functions allowed in {expr!r}")


def _check_selector(where: str, sel: Any, what: str) -> None:
    if not isinstance(sel, Mapping):
        raise _fail(where, f"{what} must be a table, got {sel!r}")
    unknown = sorted(set(sel) - MATCH_KEYS)
    if unknown:
        raise _fail(where, f"unknown {what} key(s) {unknown}; allowed: {sorted(MATCH_KEYS)}")
    for key, val in sel.items():
        scalars = val if isinstance(val, list) else [val]
        if not scalars or not all(isinstance(v, str | int | float | bool) for v in scalars):
            raise _fail(where, f"{what}.{key} must be a scalar or a list of scalars")
    if "derive" in sel:
        if sel["derive"] not in DERIVE:
            raise _fail(where, f"{what}.derive must be one of {DERIVE}")
        if (sel["derive"] != "value") != ("baseline" in sel):
            raise _fail(where, f"{what}: 'baseline' goes with derive = difference | ratio")
    if "aggregate" in sel and not AGGREGATE.match(str(sel["aggregate"])):
        raise _fail(where, f"{what}.aggregate {sel['aggregate']!r}: use 'max over theta' etc.")


def _check_claim(where: str, check: Any) -> None:
    if not isinstance(check, Mapping) or check.get("kind") not in CHECKS:
        raise _fail(where, f"check.kind must be one of {sorted(CHECKS)}")
    required, optional = CHECKS[check["kind"]]
    missing = sorted(required - set(check))
    unknown = sorted(set(check) - required - optional - CHECK_COMMON)
    if missing or unknown:
        raise _fail(where, f"{check['kind']} check: missing {missing}, unknown {unknown}")
    if check["kind"] != "manual" and not (
        {"experiment", "metric"} <= set(check) or {"number", "numbers"} & set(check)
    ):
        raise _fail(where, "a check needs experiment and metric (or number/numbers)")
    for key in ("where", "lhs", "rhs", "numerator", "denominator", "select"):
        if key in check:
            side = check[key]
            if key == "lhs" and check["kind"] == "less_than" and isinstance(side, Mapping):
                if ("upper_bound" in side) != ("bound_reason" in check):
                    raise _fail(where, "lhs.upper_bound goes with check.bound_reason")
                side = {k: v for k, v in side.items() if k not in BOUND_KEYS}
            _check_selector(where, side, f"check.{key}")
    if "aggregate" in check:
        _check_selector(where, {"aggregate": check["aggregate"]}, "check")
    for key in ("rhs_expr", "value_expr"):
        if key in check:
            _check_expr(where, check[key])
    sides = {"less_than": (("lhs", "lhs_value"), ("rhs", "rhs_value", "rhs_expr"))}
    for group in sides.get(check["kind"], ()):
        if sum(k in check for k in group) != 1:
            raise _fail(where, f"less_than needs exactly one of {group}")
    if check["kind"] in ("equals_within", "limit") and not TOLERANCES & set(check):
        raise _fail(where, f"{check['kind']} needs abs_tol, rel_tol or n_stderr")
    if ("min_gap" in check) != ("effect_reason" in check):
        raise _fail(where, "min_gap (a declared effect size) goes with effect_reason")
    if check["kind"] == "ratio_at_least" and ("at_least" in check) == ("at_least_log" in check):
        raise _fail(where, "ratio_at_least needs exactly one of at_least, at_least_log")
    for key, allowed in CHOICES.items():
        if key in check and check[key] not in allowed:
            raise _fail(where, f"check.{key} must be one of {allowed}, got {check[key]!r}")
    for key in ("for_each", "order", "numbers"):
        val = check.get(key, [])
        if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
            raise _fail(where, f"check.{key} must be a list of strings")
    if not 0.0 <= check.get("at_least_fraction", 0.0) <= 1.0:
        raise _fail(where, "check.at_least_fraction must be in [0, 1]")


def _number(where: str, raw: dict[str, Any], key: str, optional: bool) -> float | None:
    val = raw.get(key)
    if val is None and optional:
        return None
    if isinstance(val, bool) or not isinstance(val, int | float):
        raise _fail(where, f"{key} must be a number, got {val!r}")
    return float(val)


def make_entry(kind: str, raw: dict[str, Any], paper: str, fname: str) -> Entry:
    """A validated entry of ``kind`` from the raw table ``raw`` of ``paper``'s file ``fname``."""
    where = f"{fname}: {kind} {raw.get('id', '<no id>')!r}"
    for key in ("id", "source"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise _fail(where, f"missing or empty {key!r}")
    if not ID.match(raw["id"]) or not raw["id"].startswith(paper + "-"):
        raise _fail(where, f"id must match {ID.pattern} and start with '{paper}-'")
    if raw.get("figure") and not str(raw["figure"]).startswith(paper + "-"):
        raise _fail(where, f"figure {raw['figure']!r} must start with '{paper}-'")
    cls = CLASSES[kind]
    names = {f for f in cls.__dataclass_fields__} - {"paper", "kind"}
    unknown = sorted(set(raw) - names)
    if unknown:
        raise _fail(where, f"unknown field(s) {unknown}")
    data = dict(raw, paper=paper, kind=kind)
    if kind == "number":
        data["value"] = _number(where, raw, "value", False)
        for key in ("std", "stderr"):
            data[key] = _number(where, raw, key, True)
        data["scale"] = _number(where, raw, "scale", True) or 1.0
        if raw.get("reproducible", True):
            if not {"experiment", "metric"} <= set(raw.get("match", {})) or not raw.get("figure"):
                raise _fail(where, "a reproducible number needs figure and match.experiment/metric")
        if "match" in raw:
            _check_selector(where, raw["match"], "match")
        if raw.get("evidence", "sampled") not in EVIDENCE:
            raise _fail(where, f"evidence must be one of {EVIDENCE}")
        plausible = raw.get("plausible", [])
        if not isinstance(plausible, list) or len(plausible) not in (0, 2):
            raise _fail(where, "plausible must be [low, high]")
        if plausible and not raw.get("unstated"):
            raise _fail(where, "plausible goes with unstated (the setting the value hinges on)")
        data["plausible"] = tuple(float(v) for v in plausible)
    elif kind == "claim":
        if not raw.get("statement"):
            raise _fail(where, "missing statement")
        _check_claim(where, raw.get("check"))
        if raw.get("expect", "pass") not in EXPECT:
            raise _fail(where, f"expect must be one of {EXPECT}")
    else:
        if not raw.get("printed") or not raw.get("corrected"):
            raise _fail(where, "an erratum needs printed and corrected")
        if raw.get("category", "formula") not in CATEGORIES:
            raise _fail(where, f"category must be one of {CATEGORIES}")
    if kind != "erratum" and raw.get("reading_of") and not raw.get("reading"):
        raise _fail(where, "reading_of needs reading (which reading this entry uses)")
    if raw.get("weaker") and not raw.get("reading_of"):
        raise _fail(where, "weaker goes with reading_of (a weaker reading of another claim)")
    if kind != "erratum" and not raw.get("reproducible", True) and not raw.get("reason"):
        raise _fail(where, "reproducible = false needs a reason")
    return cls(**data)
