"""The terminal summary a command prints after a run: ``summary(results)`` of
``rfbench/present/summaries/<name>.py``, else the experiment's own ``summary`` (plugins).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from rfbench.compute.experiments.base import Experiment

PACKAGE = "rfbench.present.summaries"


def terminal_summary(experiment: Experiment, results: pd.DataFrame) -> pd.DataFrame:
    """A few headline rows of ``results`` (a DataFrame) written by ``experiment``, for the
    terminal.
    """
    name = f"{PACKAGE}.{experiment.name.replace('-', '_')}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return experiment.summary(results)
    return module.summary(results)
