"""Errors the user can fix: bad options, config files and data.

Every such error derives from :class:`UserError`; the command line reports it in one line with
exit status 2 (also when a job raised it). Any other exception is a bug in rfbench: exit status 1
and a log file with the traceback (:mod:`rfbench.cli.errors`). This module imports nothing, so
features, data sets and experiments can raise these errors without importing the CLI.
"""

from __future__ import annotations


class UserError(ValueError):
    """Bad input from the user; the message names the bad value and what is allowed."""
