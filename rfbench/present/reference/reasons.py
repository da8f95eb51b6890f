"""The measured root causes (``[[reason]]`` tables) and the values their texts quote
(docs/published-numbers.md#reasons)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from rfbench.present.reference.entries import HERE, load
from rfbench.present.reference.loader import (
    MATCH_KEYS,
    PAPERS,
    ReferenceDataError,
)

#: A placeholder of a reason text: ``{name}`` or ``{name:.3g}`` (a format spec).
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)(?::([^{}]*))?\}")
#: What a reason value reads from the report: of a number entry (``of``), our value, its
#: standard error, the paper's value, z, ours − paper; or one result row (``row``).
VALUE_WHATS = ("ours", "se", "paper", "z", "diff", "ratio")
#: Reductions of a value over several number entries (``of`` a list).
VALUE_OVER = ("min", "max", "mean", "count")


@dataclass(frozen=True)
class ReasonValue:
    """One number a reason quotes: ``what`` of the evaluation of the number entries ``of`` (reduced
    by ``over``; divided by ``over_of``'s) or the value of the one result row ``row`` (``over_row``,
    ``minus_row``, ``square``), times ``scale``.
    """

    name: str
    of: tuple[str, ...] = ()
    #: number entry ids whose ``what`` (reduced by ``over``) divides the ``of`` value
    over_of: tuple[str, ...] = ()
    what: str = "ours"
    over: str = "max"
    row: dict[str, Any] = field(default_factory=dict)
    over_row: dict[str, Any] = field(default_factory=dict)
    minus_row: dict[str, Any] = field(default_factory=dict)
    stderr: bool = False
    square: bool = False
    scale: float = 1.0


@dataclass(frozen=True)
class Reason:
    """A measured root cause: its ``key`` (``<paper>-reason-<i>``), the entries it explains,
    the text (a template of :class:`ReasonValue` placeholders) and the reading it depends on."""

    key: str
    ids: tuple[str, ...]
    text: str
    reading: str = ""
    values: tuple[ReasonValue, ...] = ()
    established: bool = True


def _reason_value(where: str, name: str, raw: Any, ids: set[str]) -> ReasonValue:
    if not isinstance(raw, dict):
        raise ReferenceDataError(f"{where}: value {name!r} must be a table")
    unknown = sorted(set(raw) - (set(ReasonValue.__dataclass_fields__) - {"name"}))
    if unknown:
        raise ReferenceDataError(f"{where}: value {name!r}: unknown field(s) {unknown}")
    if ("of" in raw) == ("row" in raw):
        raise ReferenceDataError(f"{where}: value {name!r} needs exactly one of 'of', 'row'")
    of, over_of = (
        [v] if isinstance(v, str) else list(v) for v in (raw.get("of", []), raw.get("over_of", []))
    )
    if over_of and not of:
        raise ReferenceDataError(f"{where}: value {name!r}: over_of goes with of")
    bad = [i for i in of + over_of if i not in ids]
    if bad:
        raise ReferenceDataError(f"{where}: value {name!r} refers to unknown {bad}")
    if raw.get("what", "ours") not in VALUE_WHATS or raw.get("over", "max") not in VALUE_OVER:
        raise ReferenceDataError(f"{where}: value {name!r}: what/over not in the vocabulary")
    for key in ("row", "over_row", "minus_row"):
        if key in raw:
            sel = raw[key]
            if not isinstance(sel, dict) or not {"experiment", "metric"} <= set(sel):
                raise ReferenceDataError(f"{where}: value {name!r}.{key} needs experiment, metric")
            unknown = sorted(set(sel) - MATCH_KEYS)
            if unknown:
                raise ReferenceDataError(f"{where}: value {name!r}.{key}: unknown {unknown}")
    scale = float(raw.get("scale", 1.0))
    return ReasonValue(name, **{**raw, "of": tuple(of), "over_of": tuple(over_of), "scale": scale})


@cache
def reasons() -> tuple[Reason, ...]:
    """Every paper's ``[[reason]]`` tables, validated: each entry has at most one reason, and
    every placeholder of a text is a declared value and every value is used."""
    ids = {e.id for e in load()}
    out: list[Reason] = []
    seen: set[str] = set()
    for paper in PAPERS:
        doc = tomllib.loads((HERE / f"{paper}.toml").read_text(encoding="utf-8"))
        for i, raw in enumerate(doc.get("reason", [])):
            where = f"{paper}.toml: reason #{i + 1}"
            unknown = sorted(set(raw) - {"ids", "text", "reading", "values", "established"})
            if unknown:
                raise ReferenceDataError(f"{where}: unknown field(s) {unknown}")
            if not isinstance(raw.get("text"), str) or not raw["text"].strip():
                raise ReferenceDataError(f"{where}: missing text")
            names = raw.get("ids")
            if not isinstance(names, list) or not names:
                raise ReferenceDataError(f"{where}: ids must be a non-empty list of entry ids")
            for name in names:
                if name not in ids:
                    raise ReferenceDataError(f"{where}: unknown id {name!r}")
                if name in seen:
                    raise ReferenceDataError(f"{where}: {name!r} already has a reason")
                seen.add(name)
            values = tuple(
                _reason_value(where, k, v, ids) for k, v in raw.get("values", {}).items()
            )
            text, reading = " ".join(raw["text"].split()), " ".join(raw.get("reading", "").split())
            used = {m.group(1) for m in PLACEHOLDER.finditer(text + " " + reading)}
            declared = {v.name for v in values}
            if used != declared:
                raise ReferenceDataError(
                    f"{where}: placeholders without a value {sorted(used - declared)}, "
                    f"values never quoted {sorted(declared - used)}"
                )
            established = bool(raw.get("established", True))
            key = f"{paper}-reason-{i + 1}"
            out.append(Reason(key, tuple(names), text, reading, values, established))
    return tuple(out)


def reason_of(entry_id: str) -> Reason | None:
    """The measured reason explaining an entry (None if none)."""
    return next((r for r in reasons() if entry_id in r.ids), None)
