"""The user's input checked the same way in every layer: :class:`UserError` for input the user can
fix (docs/architecture.md#errors) and the value checks shared by the estimator library and the
experiments. This module imports nothing of rfbench, so any layer can raise and check without
importing the CLI.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any


class UserError(ValueError):
    """Bad input from the user; the message names the bad value and what is allowed."""


def is_positive_int(value: Any) -> bool:
    """Whether ``value`` is a whole number ≥ 1 (3 and 3.0 are; True, 2.5 and 0 are not)."""
    if not isinstance(value, Real) or isinstance(value, bool) or not math.isfinite(value):
        return False
    return bool(value == int(value) and value >= 1)


def positive_int(label: str, value: Any) -> int:
    """``value`` as an int, or a ValueError naming ``label`` if it is not a positive integer."""
    if not is_positive_int(value):
        raise ValueError(f"{label} must be a positive integer, got {value!r}")
    return int(value)
