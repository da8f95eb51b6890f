"""Loading the published numbers, claims and errata of each paper's TOML file, and finding them
(docs/published-numbers.md)."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from rfbench.present.reference.loader import (
    KINDS,
    PAPERS,
    ClaimEntry,
    Entry,
    NumberEntry,
    ReferenceDataError,
    make_entry,
)

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
    return {e.id: e for e in load()}[entry_id]
