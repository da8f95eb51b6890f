"""The summary of ``REPORT.md``: provenance, counts per paper, surprises, how to read it."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from rfbench.present import reference
from rfbench.present.report.checks import OVERSHOOT
from rfbench.present.report.markdown import rel_path, table
from rfbench.present.report.numbers import family_wise
from rfbench.present.report.verdicts import (
    ALPHA,
    CLAIM_VERDICTS,
    CONSISTENT,
    DEPENDS,
    DIFFERS,
    DOES_NOT_HOLD,
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
)

if TYPE_CHECKING:
    from rfbench.present.report import Report

NUMBER_COLUMNS = NUMBER_VERDICTS
#: "ordering confirmed" is counted with "holds"
CLAIM_COLUMNS = tuple(v for v in CLAIM_VERDICTS if v != ORDERING_CONFIRMED)
#: Surprises listed in the summary.
SHOWN_SURPRISES = 8


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
    papers = reference.papers()
    rows = []
    for p in [*papers, None]:
        nc, cc = report.number_counts(p), report.claim_counts(p)
        rows.append(
            [p or "**all**", sum(nc.values())]
            + [nc[v] for v in NUMBER_COLUMNS]
            + [sum(cc.values()), cc[VERIFIED], cc[HOLDS] + cc[ORDERING_CONFIRMED]]
            + [cc[v] for v in CLAIM_COLUMNS[2:]]
        )
    header = ["paper", "numbers", *NUMBER_COLUMNS, "claims", VERIFIED, "hold", *CLAIM_COLUMNS[2:]]
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
        lines += ["Unreadable result files:", *[f"- {p}" for p in report.problems], ""]
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
        "a person). ⚠ marks a verdict that contradicts the reference's `expect`.",
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
