"""The summary of ``REPORT.md``: provenance, counts per paper, surprises, how to read it."""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING

from rfbench.present import reference
from rfbench.present.report.markdown import rel_path, table
from rfbench.present.report.verdicts import (
    CLAIM_VERDICTS,
    CONSISTENT,
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
    from rfbench.present.report.verdicts import NumberResult

NUMBER_COLUMNS = NUMBER_VERDICTS
#: "ordering confirmed" is counted with "holds"
CLAIM_COLUMNS = tuple(v for v in CLAIM_VERDICTS if v != ORDERING_CONFIRMED)
#: Family-wise error rate of the numbers compared with a standard error (Holm's procedure).
ALPHA = 0.05
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


def family_wise(report: Report, alpha: float = ALPHA) -> tuple[int, float, float]:
    """(N, Bonferroni |z| threshold, Holm's |z| cutoff) over the sampled numbers compared with a
    standard error (not tolerance-based, not replayed, not "not comparable").

    Holm's procedure rejects the k smallest p-values while the i-th is ≤ alpha / (N − i); the
    cutoff is the smallest |z| it rejects (∞ when it rejects none).
    """
    zs = sorted(
        (
            abs(r.z)
            for r in report.numbers
            if r.z is not None
            and math.isfinite(r.z)
            and not r.tolerance_based
            and r.verdict not in (REPLAYED, NOT_COMPARABLE)
        ),
        reverse=True,
    )
    n = len(zs)
    if not n:
        return 0, math.inf, math.inf
    normal = NormalDist()
    cutoff = math.inf
    for i, z in enumerate(zs):
        if 2 * (1 - normal.cdf(z)) > alpha / (n - i):
            break
        cutoff = z
    return n, normal.inv_cdf(1 - alpha / (2 * n)), cutoff


def significant(report: Report, cutoff: float) -> list[NumberResult]:
    """The *differs* numbers that are family-wise significant (|z| at least Holm's cutoff)."""
    return [
        r
        for r in report.numbers
        if r.verdict == DIFFERS and r.z is not None and not r.tolerance_based and abs(r.z) >= cutoff
    ]


def _family_wise_line(n_se: int, z_bonf: float, n_fw: int, n_differs: int, n_tol: int) -> str:
    if not n_se:
        return "**Family-wise**: no number was compared with a standard error."
    return (
        f"**Family-wise**: {n_se} numbers were compared with a standard error (replayed and not "
        f"comparable ones apart). Holm's procedure at α = {ALPHA:g} over these {n_se} "
        f"(Bonferroni: |z| > {z_bonf:.2f}) finds {n_fw} of the {n_differs} *differs* "
        f"significant; the other {n_differs - n_fw - n_tol} beyond |z| = {Z_NOISE:g} are not "
        f"family-wise significant, and {n_tol} are judged by the {REL_TOL:.0%} tolerance "
        "(no standard error, †)."
    )


def summary(report: Report) -> list[str]:
    n, c = report.number_counts(), report.claim_counts()
    checked = n[REPRODUCED] + n[WITHIN_NOISE] + n[DIFFERS]
    held = c[HOLDS] + c[ORDERING_CONFIRMED]
    tested = c[VERIFIED] + held + c[CONSISTENT] + c[WITHIN_NOISE] + c[DOES_NOT_HOLD]
    tested += c[UNTESTABLE]
    n_se, z_bonf, cutoff = family_wise(report)
    n_fw = len(significant(report, cutoff))
    n_tol = sum(1 for r in report.numbers if r.verdict == DIFFERS and r.tolerance_based)
    lines = [
        "## Summary",
        "",
        f"**Numbers** ({len(report.numbers)} published): {n[REPLAYED]} *replayed* (equal to the "
        "paper's value when the authors' released random stream is replayed: equivalent code, "
        f"not a statistical reproduction); {checked} compared with an independent sample: "
        f"{n[REPRODUCED]} reproduced, {n[WITHIN_NOISE]} within noise, {n[DIFFERS]} differ. "
        f"{n[NOT_REPRODUCIBLE]} not reproducible on a CPU (appendix), {n[NOT_RUN]} not run, "
        f"{n[NO_MATCH]} without a matching row.",
        "",
        _family_wise_line(n_se, z_bonf, n_fw, n[DIFFERS], n_tol),
        "",
        f"**Claims** ({len(report.claims)}): {tested} checked: {c[VERIFIED]} *verified "
        f"analytically* (closed forms or exact computations only), {held} *hold* on samples with "
        f"every link significant (≥ {Z_REPRODUCED:g} se), {c[CONSISTENT]} *consistent* (the "
        f"claimed direction on point estimates, not every link significant), {c[WITHIN_NOISE]} "
        f"within noise, {c[DOES_NOT_HOLD]} do not hold, {c[UNTESTABLE]} untestable. "
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
        f"- **Numbers** are compared in the paper's printed units: z = (ours − paper) / combined "
        "standard error (ours, and the paper's printed ± — a ± of unstated nature is used as a "
        "standard error —, plus the rounding of the printed digits, one unit/√12). Without any "
        f"standard error, the tolerance is {REL_TOL:.0%} of the paper's value (z marked †). "
        f"*reproduced*: |z| ≤ {Z_REPRODUCED:g} or equal to the printed digits; *within noise*: "
        f"|z| ≤ {Z_NOISE:g}; *differs*: beyond (with the measured reason). The summary also "
        "counts them under Holm's family-wise procedure.",
        "- Kinds of evidence are kept apart: *replayed* (equal when the authors' released random "
        "stream is replayed: equivalent code, not a statistical reproduction), *verified "
        "analytically* (a claim decided on closed forms or exact computations only), and "
        "sampled comparisons (*reproduced* / *within noise* / *differs*). *not comparable*: the "
        "value hinges on a setting the paper does not state (shown with the range plausible "
        "readings give); some numbers are compared on a ratio scale (said in the row).",
        "- *not run*: the results lack that figure or grid point; *no match*: results exist but "
        "no row matches the reference `match` (shown, to be fixed); numbers *not reproducible* "
        "on a CPU (GPU/TPU-scale training) are in the appendix, not counted as failures.",
        "- **Claims** are checked on the results (kinds in "
        "`rfbench/present/reference/__init__.py`): "
        "*holds* / *ordering confirmed* when every comparison holds by at least "
        f"{Z_REPRODUCED:g} standard errors (exact values count), *consistent* when the claimed "
        f"direction holds on the point estimates only, *within noise* (every failing comparison "
        f"is within {Z_REPRODUCED:g} standard errors), *does not hold*, *untestable at this "
        "sample size* (only when nothing decides), *manual* (needs a person). ⚠ marks a verdict "
        "that contradicts the reference's `expect`.",
        "- Before anything is called untestable: closed forms (`theory_*` rows, aligned with "
        "per-repetition rows) replace empirical values; a zero-variance point is exact; an "
        "ordering fails on any decided failing link; an unresolved mean of nonnegative draws that "
        "is already too large fails (its truth is larger still); a mean over repetitions is "
        "judged on the pooled sample; a declared bound decides a bounded statistic.",
        "- One verdict per paper sentence: where a sentence has several readings, the reference "
        "data declares the primary one; the others are shown in its row (`other reading —`).",
        "- Every *differs*, *does not hold* and *not comparable* row names its measured reason "
        "(`[paper-reason-i]`, stated once per paper under *Reasons*, with the rows it explains); "
        "the numbers a reason quotes are read from the results when the report is written.",
        "",
    ]
