"""The terminal summary a command prints after a run, found by the experiment's name.

A built-in experiment's summary is the function ``summary(results)`` of
``rfbench/present/summaries/<name>.py`` (presentation: editing it recomputes no cached job); an
experiment of a plugin may define :meth:`~rfbench.compute.experiments.base.Experiment.summary`
instead, whose default is the first rows of the results.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from rfbench.compute.experiments.base import Experiment

PACKAGE = "rfbench.present.summaries"


def terminal_summary(experiment: Experiment, results: pd.DataFrame) -> pd.DataFrame:
    """A few headline rows of ``results`` for the terminal.

    Parameters
    ----------
    experiment : Experiment
        The experiment that wrote ``results``.
    results : DataFrame
        Its result rows (rfbench.compute.results.load_results).

    Returns
    -------
    DataFrame, a handful of rows (the CLI prints them as a table).
    """
    name = f"{PACKAGE}.{experiment.name.replace('-', '_')}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return experiment.summary(results)
    return module.summary(results)
