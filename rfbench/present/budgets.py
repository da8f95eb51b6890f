"""The projection budget M of a result row, for figures and the report of the experiments whose
option ``projection_budget`` is M (cost, pointwise, precision): a hybrid's rows carry it as
``projection_budget`` (their ``m`` is M // n), the other rows' ``m`` is M. Files written before
``projection_budget`` was a column have M in ``m`` on every row, so they read the same. (Attention's
``budget`` column is a feature budget F, another unit: it is never read here.)
"""

from __future__ import annotations

import pandas as pd


def projection_budget(rows: pd.DataFrame) -> pd.Series:
    """M per row: ``projection_budget`` where the row has one, else ``m`` (shape (len(rows),),
    float)."""
    m = pd.to_numeric(rows["m"], errors="coerce").astype(float)
    if "projection_budget" not in rows.columns:
        return m
    return pd.to_numeric(rows["projection_budget"], errors="coerce").astype(float).fillna(m)
