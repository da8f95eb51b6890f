"""The five papers' published numbers, qualitative claims and errata, as data with citations.

One TOML file per paper (``hrf``, ``simrf``, ``derf``, ``cse``, ``spectraformer``) holds three
arrays of tables: ``[[number]]``, ``[[claim]]`` and ``[[erratum]]``. A table with an ``entries``
array is a *group*: its other keys are defaults for every entry (``source`` strings are joined
as "group source, entry source"; ``match`` tables are merged key by key). Numbers are copied
exactly as printed in the paper text (``shared/seeds/``, the file named by the TOML's ``text``
key), and tests/test_reference.py re-reads whole tables from that text to compare.

Entry kinds (:class:`NumberEntry`, :class:`ClaimEntry`, :class:`ErratumEntry`, all with ``id``,
``paper``, ``source`` = where in the paper, ``figure``, ``note``, ``spec_ref``):

- **number**: ``quantity`` (text), ``value`` as printed, ``std`` or ``stderr`` (the printed ± and
  what it is), ``unit``, ``scale`` (``value * scale`` is in our metric's units, e.g. 1e-3 for an
  MSE printed "in 10⁻³ units"), ``match`` (how to find our number, below), ``reproducible`` (false
  for GPU/TPU-only results, with ``reason``), ``spec_note`` (where the spec says the number is
  ambiguous or needs care).
- **claim**: ``statement`` (verbatim quote or close paraphrase), ``check`` (below),
  ``reproducible``/``reason``, ``spec_note``, and ``expect``: ``"pass"`` (default), ``"fail"``
  (the spec found the claim false, e.g. CSE Fig. 1 "for all θ") or ``"unknown"``.
- **erratum**: ``printed`` form, ``corrected`` form, ``magnitude`` (how much it matters, when the
  spec measured it), ``category``: formula | text | notation | inconsistency.

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
  ``by``, within ``abs_tol`` (ties count as best)? Holds if the fraction of groups where it is
  best is ≥ ``at_least_fraction``.
- ``monotone``: the ``select``-ed rows, ordered by parameter ``along``, are ``increasing`` or
  ``decreasing`` (``direction``; non-strict unless ``strict``).
- ``limit``: the value at the ``toward`` (min | max) end of parameter ``along`` equals ``value``
  / ``value_expr`` within ``abs_tol`` / ``rel_tol``.
- ``manual``: not checkable from experiment results (``reason``: e.g. GPU-only, or covered by
  unit tests of the estimator library).

Expressions (``rhs_expr``, ``value_expr``) are arithmetic in the group's parameters (``r, m, n,
d, theta, v, ...``) with ``exp, log, sqrt, sin, cos, pi, e``; :func:`evaluate_expr` evaluates them.

API: :func:`load` (all entries or one paper's), :func:`by_figure`, :func:`get` (by id),
:func:`table` (one figure's numbers keyed by match values), :func:`papers`, :func:`header`.
Experiments and figures read published numbers only through this API.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from rfbench.reference.loader import (
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
    unknown = sorted(set(doc) - {"paper", "title", "text", "spec", *KINDS})
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
    tuple of their ``match`` values for ``keys`` (None where absent).

    ``table("hrf-table3", "dataset", "m", "estimator", "aggregate", metric="mse")`` maps
    ``("s1", 20, "trig@iid", "min over rep")`` to that cell's :class:`NumberEntry`.
    """
    out: dict[tuple[Any, ...], NumberEntry] = {}
    for e in by_figure(figure_id):
        if not isinstance(e, NumberEntry) or any(e.match.get(k) != v for k, v in where.items()):
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
