"""The papers' published numbers, qualitative claims and errata, as data with citations: one
TOML file per paper (:data:`PAPERS`). The vocabulary of its entries, selectors and checks is in
docs/published-numbers.md. Experiments and figures read published numbers only through this
package's API (``__all__``).
"""

from rfbench.present.reference.entries import HERE, by_figure, get, header, load, papers, table
from rfbench.present.reference.loader import (
    CHECKS,
    MATCH_KEYS,
    ClaimEntry,
    Entry,
    ErratumEntry,
    NumberEntry,
    ReferenceDataError,
    evaluate_expr,
)
from rfbench.present.reference.reasons import (
    PLACEHOLDER,
    Reason,
    ReasonValue,
    reason_of,
    reasons,
)

__all__ = [
    "HERE",
    "PLACEHOLDER",
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
