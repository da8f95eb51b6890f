"""Columns the runner adds to every result file, so that its readers need no code of ours:
``experiment``, ``figure`` and ``features`` (docs/architecture.md#result-schema).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfbench.compute.features import registry

#: the feature count of an estimator's row (derived from ``m`` and the estimator: not part of a
#: row's identity in ``rfbench compare``)
FEATURES = "features"


def with_run_columns(rows: pd.DataFrame, experiment: str, figure: str) -> pd.DataFrame:
    """Fill the ``experiment``, ``figure`` and ``features`` columns where the rows lack them.

    Parameters
    ----------
    rows : DataFrame, shape (n_rows, n_columns)
        Result rows of one run.
    experiment, figure : str
        The run's experiment and figure names.

    Returns
    -------
    DataFrame, the rows with the three columns (``features`` null where a row is no registry
    estimator's or has no ``m``).
    """
    if "experiment" not in rows.columns:
        rows = rows.assign(experiment=experiment)
    if "figure" not in rows.columns:
        rows = rows.assign(figure=figure)
    if FEATURES not in rows.columns and {"m", "estimator"} <= set(rows.columns):
        rows = rows.assign(**{FEATURES: feature_counts(rows)})
    return rows


def feature_counts(rows: pd.DataFrame) -> pd.Series:
    """M = m × features per projection of each row's estimator (null where unknown)."""
    widths: dict[str, float] = {}
    for name in rows["estimator"].dropna().unique():
        try:
            width = registry.describe(name).estimator.features_per_projection
        except (registry.UnknownEstimatorError, ValueError):  # "exact", baselines, bad options
            width = None
        widths[name] = np.nan if width is None else float(width)
    m = pd.to_numeric(rows["m"], errors="coerce").astype(float)
    count = m * rows["estimator"].map(widths).astype(float)
    return pd.Series(pd.array(count.round(), dtype="Int64"), index=rows.index)
