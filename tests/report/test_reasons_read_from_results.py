"""Every number a reason quotes is read from the results (issue 30): perturbing the rows and
number evaluations a reason reads changes each of its values and its text, and a template holds
no measured-looking number of its own (a decimal or a percentage not declared in the entries it
explains)."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from rfbench.present import reference
from rfbench.present.reference import PLACEHOLDER, NumberEntry
from rfbench.present.report.build import MissingValue, fill, value_of
from rfbench.present.report.numbers import evaluate_number
from rfbench.present.report.rows import ResultSet, load_folder

RESULTS = Path(__file__).resolve().parents[2] / "results"
#: what an ``of`` value reads from the reference, not the results
FROM_REFERENCE = {"paper"}
#: a decimal number or a percentage: what a measurement looks like in a text
MEASURED = re.compile(r"(?<![\w.])\d*\.\d+(?:e[-+]?\d+)?|\d+(?:\.\d+)?\s*%|\d+e-\d+")
#: a reference to the paper's text, not a number: "Thm 3.1", "Eq. 4.2", "Sec. 5.1"
CITED = re.compile(r"(?:Thm|Theorem|Lemma|Eqs?\.|Sec\.|Table|Fig\.|App\.)\s*$")


@pytest.fixture(scope="module")
def results() -> ResultSet:
    if not (RESULTS / "pointwise").is_dir():
        pytest.skip("no committed results")
    return load_folder(RESULTS)


def _perturbed(found: ResultSet) -> ResultSet:
    """Every row's value and standard error moved by a factor of its own (a ratio of two rows
    moves too)."""
    rows = found.rows.copy()
    factor = np.exp(0.05 * np.sin(np.arange(len(rows)) + 1.0))
    for col in ("value", "stderr"):
        rows[col] = rows[col].astype(float) * factor
    return ResultSet(rows, found.files, found.provenance, found.problems)  # a fresh cache


def _numbers(found: ResultSet) -> dict:
    entries = [e for e in reference.load() if isinstance(e, NumberEntry)]
    return {e.id: evaluate_number(e, found, []) for e in entries}


@pytest.mark.slow  # every reference entry against the committed results
def test_every_reason_value_moves_with_the_rows_it_reads(results: ResultSet) -> None:
    before_n, moved = _numbers(results), _perturbed(results)
    after_n = _numbers(moved)
    stale = []
    for r in reference.reasons():
        texts = []
        for found, numbers in ((results, before_n), (moved, after_n)):
            texts.append(fill(r, found, numbers).text)
        for v in r.values:
            if v.what in FROM_REFERENCE and not v.row or v.over == "count":
                continue
            try:
                a, b = value_of(v, results, before_n), value_of(v, moved, after_n)
            except MissingValue:
                continue  # a reason not measured on these results prints no number
            if math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0):
                stale.append(f"{r.key}.{v.name}")
        if texts[0] == texts[1] and any(v.row or v.what not in FROM_REFERENCE for v in r.values):
            stale.append(r.key)
    assert not stale, f"reason values that do not follow the results: {stale}"


def _declared(ids: tuple[str, ...], paper: str) -> str:
    """The text of the TOML tables of the entries a reason explains and of the reason itself:
    the settings (σ, m, tolerances) a template may repeat."""
    doc = tomllib.loads((reference.HERE / f"{paper}.toml").read_text(encoding="utf-8"))
    mine = [raw for raw in doc.get("reason", []) if set(raw.get("ids", [])) & set(ids)]
    quoted = set(ids)  # and the number entries whose values the reason reads (``of``)
    for raw in mine:
        for v in raw.get("values", {}).values():
            for key in ("of", "over_of"):
                got = v.get(key, [])
                quoted |= {got} if isinstance(got, str) else set(got)
    parts = []
    for e in reference.load(paper):
        if e.id in quoted:  # the settings, never the free texts (note, reason, spec_note)
            fields = ("source", "statement", "check", "match", "value", "reading", "plausible")
            parts += [repr(getattr(e, f, "")) for f in fields]
    parts += [repr(raw.get("values", {})) for raw in mine]
    return " ".join(parts)


def test_no_reason_template_writes_a_measured_number_by_hand() -> None:
    bad = []
    for r in reference.reasons():
        paper = r.key.split("-reason-")[0]
        template = PLACEHOLDER.sub(" ", f"{r.text} {r.reading}")
        declared = _declared(r.ids, paper)
        for m in MEASURED.finditer(template):
            if CITED.search(template[: m.start()]):
                continue
            literal = m.group(0).replace("%", "").strip()
            if literal not in declared:
                bad.append(f"{r.key}: {m.group(0)!r}")
    assert not bad, "\n".join(bad)
