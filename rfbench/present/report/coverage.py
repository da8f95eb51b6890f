"""What a partial run lacks: the figures the report checks that no result row carries, each with the
command that produces it (and the data to fetch when ``rfbench reproduce`` skipped it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rfbench.compute.skipped import skipped_fixes, skipped_names
from rfbench.present.report.markdown import natural
from rfbench.present.report.verdicts import MANUAL, NOT_REPRODUCIBLE

if TYPE_CHECKING:
    from rfbench.present.report import Report


def checked_figures(report: Report) -> list[str]:
    """The figures with a number or claim the results can decide, in natural order."""
    results = [*report.numbers, *report.claims]
    ids = {r.entry.figure for r in results if r.verdict not in (NOT_REPRODUCIBLE, MANUAL)}
    return sorted(ids - {""}, key=natural)


def missing_figures(report: Report) -> list[str]:
    """The checked figures no result row carries."""
    present = set(report.figures)
    return [f for f in checked_figures(report) if f not in present]


def config_of(figure: str) -> str:
    """The config file that produces a paper figure: ``configs/<paper>/<rest>.toml``."""
    paper, _, rest = figure.partition("-")
    return f"configs/{paper}/{rest}.toml"


def coverage(report: Report) -> list[str]:
    """The *Not in these results* section: what ran, and each missing figure with the command
    that produces it; empty when every checked figure is in the results."""
    missing = missing_figures(report)
    if not missing:
        return []
    checked = checked_figures(report)
    ran = [f for f in checked if f not in missing]
    held = f"{len(ran) or 'none'} of the {len(checked)} figures and tables the report checks"
    held += f" ({', '.join(ran)})" if ran else ""
    skipped, fixes = skipped_names(report.results_dir), skipped_fixes(report.results_dir)
    lines = [
        "## Not in these results",
        "",
        f"These results hold {held}. The other {len(missing)} are left out of the tables below "
        "(the summary counts their numbers and claims as *not run*); `rfbench reproduce` runs "
        "every config, or one at a time:",
        "",
    ]
    for figure in missing:
        line = f"- `{figure}`: `rfbench run {config_of(figure)}`"
        if figure in skipped:
            data = skipped[figure]
            line += f" (skipped: {data} is not here; get it with `{fixes.get(data, '')}`)"
        lines.append(line)
    return [*lines, ""]
