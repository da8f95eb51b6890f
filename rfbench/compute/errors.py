"""Errors the user can fix: bad options, config files and data (docs/architecture.md#errors).
This module imports nothing, so any layer can raise them without importing the CLI.
"""

from __future__ import annotations


class UserError(ValueError):
    """Bad input from the user; the message names the bad value and what is allowed."""
