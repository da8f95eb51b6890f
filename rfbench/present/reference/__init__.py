"""The papers' published numbers, qualitative claims and errata, as data with citations.

One TOML file per paper (:data:`PAPERS`) holds three
arrays of tables: ``[[number]]``, ``[[claim]]`` and ``[[erratum]]``. A table with an ``entries``
array is a *group*: its other keys are defaults for every entry (``source`` strings are joined
as "group source, entry source"; ``match`` tables are merged key by key). Numbers are copied
exactly as printed in the paper text (``shared/seeds/``, the file named by the TOML's ``text``
key), and tests/report/test_reference.py re-reads whole tables from that text to compare.

Entry kinds (:class:`NumberEntry`, :class:`ClaimEntry`, :class:`ErratumEntry`, all with ``id``,
``paper``, ``source`` = where in the paper, ``figure``, ``note``, ``spec_ref``):

- **number**: ``quantity`` (text), ``value`` as printed, ``std`` or ``stderr`` (the printed ± and
  what it is), ``unit``, ``scale`` (``value * scale`` is in our metric's units, e.g. 1e-3 for an
  MSE printed "in 10⁻³ units"), ``match`` (how to find our number, below), ``reproducible`` (false
  for GPU/TPU-only results, with ``reason``), ``spec_note`` (where the spec says the number is
  ambiguous or needs care), ``evidence`` (``sampled``, default, or ``replayed``: our value
  replays the authors' released random stream), ``unstated`` (the setting the value hinges on
  that the paper does not state: verdict "not comparable") with ``plausible = [low, high]``,
  ``ratio_to`` (compare ours / ours(that id) with paper / paper(that id)), ``second_of`` (the
  id of the entry comparing the same printed number with our own stream: this one compares it a
  second time, e.g. against a replay of the authors' released code, and is counted once).
- **number** and **claim**: ``reading`` (the reading of the paper's sentence the entry uses)
  and ``reading_of`` (the id of the entry with the primary reading: this one is shown beside
  it and not counted; one verdict per sentence).
- **claim**: ``statement`` (verbatim quote or close paraphrase), ``check`` (below),
  ``reproducible``/``reason``, ``spec_note``, and ``expect``: ``"pass"`` (default), ``"fail"``
  (the spec found the claim false, e.g. CSE Fig. 1 "for all θ") or ``"unknown"``.
- **erratum**: ``printed`` form, ``corrected`` form, ``magnitude`` (how much it matters, when the
  spec measured it), ``category``: formula | text | notation | inconsistency, ``checked_by``
  (the claim that checks the printed form on the results: the Findings list the erratum).

A fourth array, ``[[reason]]``, holds the *measured* root causes, one per cause: the ``ids`` it
explains, ``text`` and optionally ``reading`` (templates whose placeholders ``{name}`` /
``{name:.3f}`` are :class:`ReasonValue` tables in ``[reason.values]``, read from the results when
the report is written) and ``established = false`` (a hypothesis). A test requires one on each
*differs* and *does not hold* row.

``match`` (numbers) and check *selectors* use result-column names
(docs/architecture.md#result-schema): ``experiment``, ``figure``, ``estimator`` (registry names,
e.g. ``angular-hybrid@iid``, ``positive@simrf``, ``cse``), ``kernel``, ``metric``, any parameter
column (``d, m, n, r, theta, sigma, dataset, regime, variant, v, m_per_d, pair_rank, rep, ...``; a
list means "any of"), and:

- ``derive``: ``value`` (default: the selected row's value), ``difference`` (row(estimator) −
  row(baseline)) or ``ratio`` (row(estimator) / row(baseline)), with ``baseline`` an estimator;
  rows are paired on all other columns, and the derived value is formed before ``aggregate``;
- ``aggregate``: ``"<min|max|mean|sum> over <param>"`` reduces the selected rows over a
  parameter (e.g. ``"max over theta"``, ``"min over rep"``: over the per-repetition rows),
  ``"at <min|max> <param>"`` takes the row at the smallest/largest value (a limit on the grid);
- ``std_metric``: the metric comparable to the printed ± (numbers only).

A key absent from a selector does not filter. A number's ``figure`` is the ``figure`` column of
the results it compares with (``NumberEntry.scaled`` is its value in our metric's units). A
claim's ``figure`` only says which paper figure it is about: its rows are selected by the check
alone (``figure`` in ``where`` or ``for_each`` when several figures share an experiment).

Check vocabulary (``check.kind``). Common keys: ``experiment``, ``metric``, ``figure``,
``where`` (a selector applied to all rows), ``for_each`` (parameters: the check must hold in every
group), ``aggregate`` (applied inside each group before comparing). A side selector (``lhs``,
``rhs``, ``numerator``, ``denominator``, ``select``) narrows the group's rows further and may
override ``metric``/``aggregate``; after aggregation each side is one value per group (``select``:
one value per value of ``along``). "Smaller" means a smaller metric value.

- ``ordering``: ``order`` lists values of ``by`` (default ``estimator``) from smallest to
  largest metric; holds if each is ≤ (``strict``: <) the next.
- ``less_than``: one of ``lhs`` (selector) / ``lhs_value`` is below one of ``rhs`` / ``rhs_value``
  / ``rhs_expr`` (strictly unless ``strict = false``).
- ``ratio_at_least``: value(``numerator``) / value(``denominator``) ≥ ``at_least`` (or
  log ratio ≥ ``at_least_log``); with ``log_values`` the metric is a log, so the ratio is
  exp(numerator − denominator).
- ``equals_within``: ``lhs`` (selector) equals ``value`` / ``value_expr`` / ``rhs`` (selector)
  within ``abs_tol``, ``rel_tol`` or ``n_stderr`` standard errors (of the rows, combined in
  quadrature for two sides); or ``number`` /
  ``numbers``: our value of those number entries (their ``match``) equals the published value.
- ``count``: in each ``for_each`` group, is ``estimator`` the best (``best``: min | max) value of
  ``by``, within ``abs_tol`` (ties count as best) or, with ``range_tol``, within that fraction of
  the metric's range over the group's ``panel`` (the plotted axis: "on par" as a reader sees it)?
  Holds if the fraction of groups where it is best is ≥ ``at_least_fraction``.
- ``monotone``: the ``select``-ed rows, ordered by parameter ``along``, are ``increasing`` or
  ``decreasing`` (``direction``; non-strict unless ``strict``).
- ``limit``: the value at the ``toward`` (min | max) end of parameter ``along`` equals ``value``
  / ``value_expr`` within ``abs_tol`` / ``rel_tol``.
- ``manual``: not checkable from experiment results (``reason``: e.g. GPU-only, or covered by
  unit tests of the estimator library).

Optional on any check: ``theory_metric`` (e.g. ``"theory_rel_rmse"``): each row of ``metric``
takes the closed form at the same point where the rows have one (exact, so always resolved);
``theory_stderr`` (e.g. ``"theory_mse"``): a bias/mean row's standard error is √(MSE/n) from
the closed form, valid under the claim that the estimator is unbiased. A ``less_than`` lhs may
declare ``upper_bound`` (with the check's ``bound_reason``): the true value of its statistic is
at most that (e.g. 2 for the relative MAE of a nonnegative unbiased estimator), which decides a
comparison its sample cannot resolve.

Expressions (``rhs_expr``, ``value_expr``) are arithmetic in the group's parameters (``r, m, n,
d, theta, v, ...``) with ``exp, log, sqrt, sin, cos, pi, e``; :func:`evaluate_expr` evaluates them.

Experiments and figures read published numbers only through this module's API (``__all__``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rfbench.present.reference.loader import (
    CHECKS,
    KINDS,
    MATCH_KEYS,
    PAPERS,
    ClaimEntry,
    Entry,
    ErratumEntry,
    NumberEntry,
    ReferenceDataError,
    evaluate_expr,
    make_entry,
)

__all__ = [
    "CHECKS",
    "MATCH_KEYS",
    "ClaimEntry",
    "Entry",
    "ErratumEntry",
    "NumberEntry",
    "ReferenceDataError",
    "by_figure",
    "evaluate_expr",
    "get",
    "header",
    "load",
    "papers",
    "Reason",
    "ReasonValue",
    "reason_of",
    "reasons",
    "table",
]

HERE = Path(__file__).resolve().parent


def _expand(item: dict[str, Any]) -> list[dict[str, Any]]:
    """A group (a table with ``entries``) gives its other keys to each entry as defaults."""
    if "entries" not in item:
        return [item]
    defaults = {k: v for k, v in item.items() if k != "entries"}
    out = []
    for raw in item["entries"]:
        merged = {**defaults, **raw}
        if "source" in defaults and "source" in raw:
            merged["source"] = f"{defaults['source']}, {raw['source']}"
        if "match" in defaults and "match" in raw:
            merged["match"] = {**defaults["match"], **raw["match"]}
        out.append(merged)
    return out


@cache
def _load_file(paper: str) -> tuple[Entry, ...]:
    path = HERE / f"{paper}.toml"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ReferenceDataError(f"{path.name}: {exc}") from None
    if doc.get("paper") != paper:
        raise ReferenceDataError(f"{path.name}: top-level paper must be {paper!r}")
    unknown = sorted(set(doc) - {"paper", "title", "text", "spec", "reason", *KINDS})
    if unknown:
        raise ReferenceDataError(f"{path.name}: unknown top-level key(s) {unknown}")
    return tuple(
        make_entry(kind, raw, paper, path.name)
        for kind in KINDS
        for item in doc.get(kind, [])
        for raw in _expand(item)
    )


def header(paper: str) -> dict[str, str]:
    """The file header of a paper: title, seed text file name, spec file."""
    doc = tomllib.loads((HERE / f"{paper}.toml").read_text(encoding="utf-8"))
    return {k: doc.get(k, "") for k in ("paper", "title", "text", "spec")}


def papers() -> list[str]:
    """The papers with reference data, in the suite's order."""
    return list(PAPERS)


def load(paper: str | None = None) -> list[Entry]:
    """All entries (of one ``paper`` if given), validated; ids are unique across papers."""
    if paper is not None and paper not in PAPERS:
        raise ReferenceDataError(f"unknown paper {paper!r}; allowed: {', '.join(PAPERS)}")
    entries = [e for p in PAPERS for e in _load_file(p)]
    seen: dict[str, Entry] = {}
    for e in entries:
        if e.id in seen:
            raise ReferenceDataError(f"{e.paper}.toml: duplicate id {e.id!r}")
        seen[e.id] = e
    for e in entries:
        refs = ("reading_of", "ratio_to", "second_of")
        for ref in (getattr(e, name, "") for name in refs):
            if ref and not isinstance(seen.get(ref), type(e)):
                raise ReferenceDataError(f"{e.paper}.toml: {e.id!r} refers to unknown {ref!r}")
        checked = getattr(e, "checked_by", "")
        if checked and not isinstance(seen.get(checked), ClaimEntry):
            raise ReferenceDataError(f"{e.paper}.toml: {e.id!r}: checked_by {checked!r} unknown")
        if not isinstance(e, ClaimEntry):
            continue
        refs = [r for r in [e.check.get("number"), *e.check.get("numbers", [])] if r]
        bad = [r for r in refs if not isinstance(seen.get(r), NumberEntry)]
        if bad:
            raise ReferenceDataError(f"{e.paper}.toml: claim {e.id!r} refers to unknown {bad}")
    return [e for e in entries if paper is None or e.paper == paper]


def by_figure(figure_id: str) -> list[Entry]:
    """The entries serving one figure/table id (e.g. ``"hrf-table3"``)."""
    return [e for e in load() if e.figure == figure_id]


def table(figure_id: str, *keys: str, **where: Any) -> dict[tuple[Any, ...], NumberEntry]:
    """The numbers of one figure/table whose ``match`` has the values ``where``, keyed by the
    tuple of their ``match`` values for ``keys`` (None where absent); other readings of a cell
    (``reading_of``) are left out.

    ``table("hrf-table3", "dataset", "m", "estimator", "aggregate", metric="mse")`` maps
    ``("s1", 20, "trig@iid", "min over rep")`` to that cell's :class:`NumberEntry`.
    """
    out: dict[tuple[Any, ...], NumberEntry] = {}
    for e in by_figure(figure_id):
        if not isinstance(e, NumberEntry) or any(e.match.get(k) != v for k, v in where.items()):
            continue
        if e.reading_of:  # another reading of a printed cell: the table has the cell once
            continue
        key = tuple(e.match.get(k) for k in keys)
        if key in out:
            raise ReferenceDataError(f"{figure_id}: {keys} = {key} names {out[key].id} and {e.id}")
        out[key] = e
    return out


def get(entry_id: str) -> Entry:
    """One entry by its id."""
    for e in load():
        if e.id == entry_id:
            return e
    raise KeyError(entry_id)


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
    rows = {k: dict(raw[k]) for k in ("row", "over_row", "minus_row") if k in raw}
    flags = {k: bool(raw[k]) for k in ("stderr", "square") if k in raw}
    return ReasonValue(
        name,
        tuple(of),
        tuple(over_of),
        raw.get("what", "ours"),
        raw.get("over", "max"),
        **rows,
        **flags,
        scale=float(raw.get("scale", 1.0)),
    )


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
    for r in reasons():
        if entry_id in r.ids:
            return r
    return None
