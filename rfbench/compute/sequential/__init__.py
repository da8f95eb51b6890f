"""Anytime-valid confidence sequences and the sequential stopping rule
(docs/architecture.md#sequential-draws): the sequences, their p-values and Holm's step-down in
:mod:`~rfbench.compute.sequential.confidence`, the rule that reads them after every batch in
:mod:`~rfbench.compute.sequential.rule`. Both are imported from here.
"""

from rfbench.compute.sequential.confidence import (
    ALPHA,
    Interval,
    anytime_p_value,
    asymptotic_cs,
    bernstein_cs,
    bounded_interval,
    holm,
    interval,
    mixture_margin,
    rho2_for,
)
from rfbench.compute.sequential.rule import (
    BEST,
    CAP,
    EVERY,
    RESOLVED,
    STOP_RULES,
    Other,
    Sampled,
    decide,
    sample_until_resolved,
    select_best,
    settled,
)

__all__ = [
    "ALPHA",
    "BEST",
    "CAP",
    "EVERY",
    "RESOLVED",
    "STOP_RULES",
    "Interval",
    "Other",
    "Sampled",
    "anytime_p_value",
    "asymptotic_cs",
    "bernstein_cs",
    "bounded_interval",
    "decide",
    "holm",
    "interval",
    "mixture_margin",
    "rho2_for",
    "sample_until_resolved",
    "select_best",
    "settled",
]
