"""The opening of ``REPORT.md``: the *Findings*, computed from the verdicts, the measured reasons
and the beyond-the-papers results (never typed text): what reproduced, the claims that do not hold
or depend on the reading, the errata that change numbers, this repository's own headlines and the
offsets whose cause is not established; then the summary (provenance, counts per paper, surprises)
and how to read the report."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from rfbench.compute.text import first_sentence
from rfbench.present import reference
from rfbench.present.report.beyond import attention_headline, stabilised_headline
from rfbench.present.report.checks import OVERSHOOT
from rfbench.present.report.markdown import escape_markup, rel_path, table
from rfbench.present.report.numbers import family_wise
from rfbench.present.report.verdicts import (
    ALPHA,
    CLAIM_VERDICTS,
    CONSISTENT,
    DEPENDS,
    DIFFERS,
    DOES_NOT_HOLD,
    HELD,
    HOLDS,
    MANUAL,
    NO_MATCH,
    NOT_COMPARABLE,
    NOT_REPRODUCIBLE,
    NOT_RUN,
    NUMBER_VERDICTS,
    ORDERING_CONFIRMED,
    REL_TOL,
    REPLAYED,
    REPRODUCED,
    UNTESTABLE,
    VERIFIED,
    WITHIN_NOISE,
    Z_NOISE,
    Z_REPRODUCED,
    ClaimResult,
)

if TYPE_CHECKING:
    from rfbench.present.report import Report

#: the claim verdicts counted in a column of their own (after "verified" and "hold", which
#: counts "ordering confirmed" with "holds")
CLAIM_COLUMNS = tuple(v for v in CLAIM_VERDICTS if v not in (VERIFIED, HOLDS, ORDERING_CONFIRMED))
#: Surprises listed in the summary.
SHOWN_SURPRISES = 8


_PART = re.compile(r"^(\d+) of (\d+) comparisons hold")
_REASON = re.compile(r"\[([a-z]+-reason-\d+)\]")


def _part_of_range(detail: str) -> str:
    """ "k of n comparisons hold" with 0 < k < n (the claim holds on part of its range)."""
    for piece in detail.split("; "):
        m = _PART.match(piece)
        if m and 0 < int(m.group(1)) < int(m.group(2)):
            return f"{m.group(1)} of {m.group(2)} comparisons hold"
    return ""


def _cause(report: Report, r: ClaimResult) -> str:
    by_key = {f.key: f for f in report.reasons}
    key = _REASON.search(r.detail)
    reason = by_key.get(key.group(1)) if key else None
    return first_sentence(reason.text, clause=True, limit=200) if reason and reason.measured else ""


def _reproduced(report: Report) -> list[str]:
    """What reproduced and how much: sampled, deterministic and replayed numbers apart."""
    ns, nd = report.number_counts(sampled=True), report.number_counts(sampled=False)
    c = report.claim_counts()
    sampled = ns[REPRODUCED] + ns[WITHIN_NOISE] + ns[DIFFERS]
    computed = nd[REPRODUCED] + nd[WITHIN_NOISE] + nd[DIFFERS]
    replayed = Counter(r.entry.figure for r in report.numbers if r.verdict == REPLAYED)
    lines = ["**What reproduced**", ""]
    if sampled:
        lines.append(
            f"- {ns[REPRODUCED]} of {sampled} published numbers compared with an independent "
            f"sample reproduce (|z| ≤ 2), {ns[WITHIN_NOISE]} are within noise and "
            f"{ns[DIFFERS]} differ (Holm's procedure over them); {nd[REPRODUCED]} of "
            f"{computed} deterministic values (closed forms, exact computations) equal the "
            "printed digits."
        )
    if replayed:
        figs = ", ".join(f"{fig} ({n} cells)" for fig, n in sorted(replayed.items()))
        lines.append(
            f"- *Replayed*, not reproduced: {figs} equal the paper when the authors' released "
            "random stream is replayed — equivalent code, not an independent reproduction."
        )
    held = c[HOLDS] + c[ORDERING_CONFIRMED]
    lines.append(
        f"- Claims: {c[VERIFIED]} verified analytically, {held} hold on samples, "
        f"{c[CONSISTENT]} consistent, {c[DEPENDS]} depend on the reading, {c[DOES_NOT_HOLD]} "
        "do not hold (below)."
    )
    return lines + [""]


def _line(r: ClaimResult) -> str:
    statement = first_sentence(r.entry.statement, clause=True, limit=120)
    return f"- `{r.entry.id}` ({r.entry.figure}): {statement}"


def _head(reading: str) -> str:
    """The name of a reading: its text before the first colon ("similar in size")."""
    return reading.split(":")[0].strip()


def _contradicted(report: Report) -> list[str]:
    out = []
    for r in report.claims:
        if r.verdict != DOES_NOT_HOLD:
            continue
        part = _part_of_range(r.detail)
        cause = _cause(report, r)
        text = f"{_line(r)} — *{DOES_NOT_HOLD}*" + (f" ({part})" if part else "")
        held = [(reading, v) for reading, v in r.readings[1:] if v in HELD]
        if held:  # a weaker reading holds (a deciding one would make it depend on the reading)
            heads = [f"{_head(reading)}: {v}" for reading, v in held]
            text += f" ({_head(r.readings[0][0])}; {'; '.join(heads)})"
        out.append(text + (f": {cause}." if cause else "."))
    return ["**Claims that do not hold**", "", *out, ""] if out else []


def _reading_dependent(report: Report) -> list[str]:
    out = []
    for r in report.claims:
        if r.verdict != DEPENDS:
            continue
        shown = "; ".join(
            f"{first_sentence(reading, clause=True, limit=90)}: {v}" for reading, v in r.readings
        )
        out.append(f"{_line(r)} — *{DEPENDS}*: {shown}.")
    return ["**Claims whose verdict depends on the reading**", "", *out, ""] if out else []


def _errata(report: Report) -> list[str]:
    verdicts = {r.entry.id: r for r in report.claims}
    out = [
        f"- `{e.id}` ({e.source}): printed {e.printed}; corrected {e.corrected}. On the "
        f"results the printed form {claim.verdict} (`{claim.entry.id}`)."
        for e in report.errata
        if (claim := verdicts.get(e.checked_by)) is not None
    ]
    return ["**Errata that change numbers**", "", *out, ""] if out else []


def findings(report: Report) -> list[str]:
    """The Findings section (a bulleted list; empty when nothing was checked)."""
    unexplained = [
        f"- {', '.join(f'`{i}`' for i in r.ids[:3])}{' …' if len(r.ids) > 3 else ''}: "
        f"{first_sentence(r.text.removeprefix('Cause not established. '), clause=True, limit=220)} "
        f"([{r.key}](#{r.key}))."
        for r in report.reasons
        if not r.established and r.measured
    ]
    body = [*_contradicted(report), *_reading_dependent(report), *_errata(report)]
    beyond = [h(report.results_dir) for h in (attention_headline, stabilised_headline)]
    if any(beyond):
        body += ["**Beyond the papers**", "", *[f"- {t}" for t in beyond if t], ""]
    if unexplained:
        body += ["**Offsets whose cause is not established**", "", *unexplained, ""]
    if not (body or report.numbers):
        return []
    return ["## Findings", "", *_reproduced(report), *body]


def provenance_line(report: Report, out_dir: Path) -> str:
    """One line: how many files, their creation times and git commits."""
    if not report.files:
        return f"Results: no result files in `{rel_path(report.results_dir, out_dir)}`."
    created = sorted(str(p.get("created", "?")) for p in report.provenance)
    commits = sorted(
        {
            f"{str(p.get('git_commit') or 'unknown')[:10]}"
            + (" (uncommitted changes)" if p.get("git_dirty") else "")
            for p in report.provenance
        }
    )
    when = created[0] if created[0] == created[-1] else f"{created[0]} to {created[-1]}"
    files = f"{len(report.files)} file{'s' if len(report.files) != 1 else ''}"
    return (
        f"Results: {files} in `{rel_path(report.results_dir, out_dir)}`, "
        f"created {when}; git commit {', '.join(commits)}."
    )


def _family_wise_line(report: Report) -> str:
    n_se, z_bonf, cutoff = family_wise(report.numbers)
    if not n_se:
        return "**Family-wise**: no number was compared with a standard error."
    mine = [r for r in report.numbers if r.in_family and not r.entry.second_of]
    n_fw = sum(r.verdict == DIFFERS for r in mine)
    spared = sum(r.verdict == WITHIN_NOISE and abs(r.z or 0) > Z_NOISE for r in mine)
    n_tol = sum(r.verdict == DIFFERS and r.tolerance_based for r in report.numbers)
    cut = "rejects none" if math.isinf(cutoff) else f"rejects |z| ≥ {cutoff:.2f}"
    return (
        f"**Family-wise**: {n_se} sampled numbers were compared with a standard error (replayed, "
        f"not comparable and second comparisons apart). Holm's procedure at α = {ALPHA:g} over "
        f"them (Bonferroni: |z| > {z_bonf:.2f}) {cut}; it decides each row's *differs*: {n_fw} "
        f"differ, {spared} beyond |z| = {Z_NOISE:g} are not family-wise significant and are "
        f"*within noise* (their row says so); {n_tol} differ by the {REL_TOL:.0%} tolerance (no "
        "standard error, †)."
    )


def summary(report: Report) -> list[str]:
    n, c = report.number_counts(), report.claim_counts()
    ns, nd = report.number_counts(sampled=True), report.number_counts(sampled=False)
    checked = ns[REPRODUCED] + ns[WITHIN_NOISE] + ns[DIFFERS]
    computed = nd[REPRODUCED] + nd[WITHIN_NOISE] + nd[DIFFERS]
    held = c[HOLDS] + c[ORDERING_CONFIRMED]
    tested = c[VERIFIED] + held + c[CONSISTENT] + c[WITHIN_NOISE] + c[DOES_NOT_HOLD]
    tested += c[UNTESTABLE] + c[DEPENDS]
    seconds = [r for r in report.numbers if r.entry.second_of]
    second = Counter(r.verdict for r in seconds)
    lines = [
        "## Summary",
        "",
        f"**Numbers** ({sum(n.values())} published): {n[REPLAYED]} *replayed* (equal to the "
        "paper's value when the authors' released random stream is replayed: equivalent code, "
        f"not a statistical reproduction); {checked} compared with an independent sample: "
        f"{ns[REPRODUCED]} reproduced, {ns[WITHIN_NOISE]} within noise, {ns[DIFFERS]} differ; "
        f"{computed} deterministic values (closed forms, exact computations, data statistics) "
        f"compared with the printed digits: {nd[REPRODUCED]} reproduced, {nd[WITHIN_NOISE]} "
        f"within noise, {nd[DIFFERS]} differ. {n[NOT_COMPARABLE]} not comparable, "
        f"{n[NOT_REPRODUCIBLE]} not reproducible on a CPU (appendix), {n[NOT_RUN]} not run, "
        f"{n[NO_MATCH]} without a matching row. A second comparison of {len(seconds)} of them "
        "with a replay of the authors' released code is in its own tables, not counted "
        f"({second[REPRODUCED]} reproduced, {second[WITHIN_NOISE]} within noise, "
        f"{second[DIFFERS]} differ).",
        "",
        _family_wise_line(report),
        "",
        f"**Claims** ({len(report.claims)}): {tested} checked: {c[VERIFIED]} *verified "
        f"analytically* (closed forms or exact computations only), {held} *hold* on samples with "
        f"every link significant (≥ {Z_REPRODUCED:g} se), {c[CONSISTENT]} *consistent* (the "
        f"claimed direction on point estimates, not every link significant), {c[WITHIN_NOISE]} "
        f"within noise, {c[DEPENDS]} *depend on the reading* (the paper's sentence read another "
        f"way gives another verdict: both shown), {c[DOES_NOT_HOLD]} do not hold, "
        f"{c[UNTESTABLE]} untestable. "
        f"{c[MANUAL]} need a person, {c[NOT_RUN] + c[NO_MATCH]} not run or without rows, "
        f"{c[NOT_REPRODUCIBLE]} not reproducible on a CPU.",
        "",
    ]
    rows = []
    for p in [*reference.papers(), None]:
        nc, cc = report.number_counts(p), report.claim_counts(p)
        rows.append(
            [p or "**all**", sum(nc.values())]
            + [nc[v] for v in NUMBER_VERDICTS]
            + [sum(cc.values()), cc[VERIFIED], cc[HOLDS] + cc[ORDERING_CONFIRMED]]
            + [cc[v] for v in CLAIM_COLUMNS]
        )
    header = ["paper", "numbers", *NUMBER_VERDICTS, "claims", VERIFIED, "hold", *CLAIM_COLUMNS]
    lines += table(header, rows)
    surprises = report.surprises()
    if surprises:
        lines.append(
            f"Claims whose verdict contradicts the reference's expectation: {len(surprises)}"
        )
        lines += [
            f"- `{r.entry.id}`: {r.verdict} ({r.surprise})" for r in surprises[:SHOWN_SURPRISES]
        ]
        if len(surprises) > SHOWN_SURPRISES:
            lines.append(f"- ... {len(surprises) - SHOWN_SURPRISES} more (⚠ in the claim tables)")
        lines.append("")
    if report.problems:
        problems = [f"- {escape_markup(p)}" for p in report.problems]
        lines += ["Unreadable result files:", *problems, ""]
    return lines


def method() -> list[str]:
    """The "How to read this report" section: every verdict and rule in one place."""
    return [
        "## How to read this report",
        "",
        "**The decision rule** (one, for numbers and claims, passes and failures alike). A claim "
        "is a comparison a ≤ b with combined standard error se; a declared effect or tolerance "
        'is part of it: "beats by at least δ" is a + δ ≤ b, "equal within tol" is '
        f"|d| ≤ tol. It *holds* when it holds by at least {Z_REPRODUCED:g} se (|d| + "
        f"{Z_REPRODUCED:g} se ≤ tol; d − {Z_REPRODUCED:g} se ≥ δ; exact values: by any margin), "
        f"*does not hold* when it fails by more than {Z_REPRODUCED:g} se (|d| − "
        f"{Z_REPRODUCED:g} se > tol; d + {Z_REPRODUCED:g} se < δ), and is undecided in between: "
        "*consistent* (the claimed side on the point estimates) or *within noise* (the other "
        "side). A tolerance given in standard errors (`n_stderr`) is a test that no difference "
        "is detectable, pass or fail. Closed forms (`theory_*` rows) replace sampled values "
        "wherever the results carry them; a check that is true by construction is not counted "
        "as a verification (its row says what is left unchecked).",
        f"- **Numbers**: z = (ours − paper) / combined standard error (ours, the paper's printed "
        "± — a ± of unstated nature is used as a standard error —, and the printed digits' "
        "rounding, one unit/√12), with a 95 % confidence interval of ours − paper beside it. "
        f"*reproduced*: |z| ≤ {Z_REPRODUCED:g} or equal to the printed digits; *differs*: "
        f"|z| > {Z_NOISE:g} and rejected by Holm's procedure at α = {ALPHA:g} over every sampled "
        "number compared with a standard error (the family-wise correction decides the row); "
        f"*within noise* otherwise. Without any standard error the tolerance is {REL_TOL:.0%} "
        f"of the paper's value (z marked †) and |z| > {Z_NOISE:g} differs. Deterministic "
        "values (closed forms, exact computations) are counted apart from sampled ones.",
        "- Kinds of evidence are kept apart: *replayed* (equal when the authors' released random "
        "stream is replayed: equivalent code, not a statistical reproduction), *verified "
        "analytically* (a claim decided on closed forms or exact computations only), and "
        "sampled comparisons. *not comparable*: the value hinges on a setting the paper does not "
        "state (shown with the range plausible readings give); some numbers are compared on a "
        "ratio scale (said in the row). *not run*: the results lack that figure or grid point; "
        "*no match*: no row matches the reference `match` (shown, to be fixed); numbers *not "
        "reproducible* on a CPU are in the appendix, not counted as failures.",
        "- **Claims**: *holds* / *ordering confirmed* / *verified analytically* (closed forms "
        "only) when every comparison holds; *consistent*, *within noise*, *does not hold* as the "
        "rule says; *untestable at this sample size* only when nothing decides; *manual* (needs "
        "a person). ⚠ marks a verdict that contradicts the reference's `expect`. A claim that "
        "one method is the best of many groups (a `count` check) is a family of comparisons: "
        "one going the wrong way fails only if it survives Holm's procedure over all of them, "
        "at the level at which it would fail alone (a sequentially drawn row: its anytime "
        "p-value); otherwise it is within noise.",
        "- **Readings**: the primary reading of a sentence is the paper's own definitions; every "
        "other reading is shown in the row (`other reading —`) with its own verdict, and when "
        "the readings disagree on whether the claim holds the verdict is *depends on the "
        "reading*.",
        "- **Unresolved samples** (a heavy-tailed mean whose sample cannot resolve it) are left "
        "out; a check with nothing else is untestable. One exception: an unresolved mean of "
        f"nonnegative draws (an MSE) that is already larger than the other side by more than "
        f"{Z_REPRODUCED:g} se *and* at least {OVERSHOOT:g}× fails the claim that it is smaller "
        "(such a sample typically underestimates its mean; the factor guards against one that "
        "overshoots). A declared bound decides a bounded statistic.",
        "- Every *differs*, *does not hold* and *not comparable* row names its measured reason "
        "(`[paper-reason-i]`, stated once per paper under *Reasons*); every number a reason "
        "quotes is read from the results when the report is written.",
        "",
    ]
