"""Estimator names: ``component@weights``, split the same way everywhere (no imports: any module
may use it, from the estimator library to the figures)."""

from __future__ import annotations

#: The coupling of a name without '@' (independent Gaussian projections).
DEFAULT_WEIGHTS = "iid"


def split_name(name: str) -> tuple[str, str | None]:
    """``"trig@orf"`` -> ("trig", "orf"); ``"cluster-hybrid"`` -> ("cluster-hybrid", None)."""
    head, sep, tail = name.partition("@")
    return head, (tail if sep else None)


def weights_of(name: str) -> str:
    """The coupling named after '@', or the default ``"iid"``: ``"cse"`` -> ``"iid"``."""
    return split_name(name)[1] or DEFAULT_WEIGHTS


def family_of(name: str) -> str:
    """The component or hybrid before '@': ``"trig@orf"`` -> ``"trig"``."""
    return split_name(name)[0]
