"""The papers' published numbers, qualitative claims and errata, as data with citations: one
TOML file per paper (:data:`PAPERS`). The vocabulary of its entries, selectors and checks is in
docs/published-numbers.md. Experiments and figures read published numbers only through this
package's API (``__all__``), and what each paper calls our estimators and couplings
(:data:`PAPER_NAMES`, for legends and table columns) from here too.
"""

from __future__ import annotations

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
    "PAPER_NAMES",
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
    "paper_name",
    "papers",
    "Reason",
    "ReasonValue",
    "reason_of",
    "reasons",
    "table",
]

#: What each paper calls our estimators (full names) and couplings or mechanisms (bare names), for
#: legends and table columns; matplotlib mathtext where the paper writes a formula. The order of a
#: paper's entries is its legend order.
PAPER_NAMES: dict[str, dict[str, str]] = {
    "hrf": {  # HRF Eqs. 2, 3, 19, 20 (and the CSE paper's captions for its estimator)
        "trig@iid": r"$\widehat{\mathrm{SM}}^{\mathrm{trig}}$",
        "hyperbolic@iid": r"FAVOR+ $\widehat{\mathrm{SM}}^{++}$",
        "positive@iid": r"$\widehat{\mathrm{SM}}^{+}$",
        "angular-hybrid@iid": "angular hybrid",
        "gaussian-hybrid@iid": "Gaussian hybrid",
        "cse": "CSE (shared ω, τ = ω)",
    },
    "hrf-clusters": {  # HRF Fig. 6 and Table 3 (App. H.3): their FAVOR+ is the single map SM⁺
        "cluster-hybrid": "Hybrid-Cluster",
        "positive@iid": "FAVOR+ (= SM⁺)",
        "trig@iid": "Trig",
    },
    "simrf": {  # SimRF's couplings (Sec. 3, Figs. 4-8); "optimum" is Fig. 4's optimiser
        "iid": "IIDRFs",
        "orf": "ORFs",
        "simrf": "SimRFs",
        "simrf-plus": "SimRFs+",
        "orf-fast": "ORFs (fast)",
        "simrf-fast": "SimRFs (fast)",
        "optimum": "numerically optimised",
    },
    "derf": {  # DERF's mechanisms (Sec. 5.1); trig-sincos: the [sin, cos] map
        "trig": "TrigRF",
        "trig-sincos": "TrigRF [sin, cos]",
        "positive": "PosRF",
        "gerf": "GERF",
        "aderf": "ADERF",
        "sderf": "SDERF",
        "saderf": "SADERF",
    },
    "spectraformer": {  # Spectraformer's components and weights (Sec. 3)
        "trig": "TrigRF",
        "positive": "PosRF",
        "gerf": "OPRF",
        "saderf": "SADERF",
        "iid": "Base",
    },
}


def paper_name(name: str, paper: str) -> str:
    """``paper``'s name for an estimator, coupling or mechanism (``name`` itself if none)."""
    return PAPER_NAMES[paper].get(name, name)
