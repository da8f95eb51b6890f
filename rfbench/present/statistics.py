"""What the presentation computes from result rows in more than one place (compare's flags, the
summaries, figures and report): one copy of each.

- Multiple testing: Holm's step-down procedure (:func:`holm`).
- The projection budget M of a result row (:func:`projection_budget`), for the experiments whose
  option ``projection_budget`` is M (cost, pointwise, precision): a hybrid's rows carry it as
  ``projection_budget`` (their ``m`` is M // n), the other rows' ``m`` is M. Files written before
  ``projection_budget`` was a column have M in ``m`` on every row, so they read the same.
  (Attention's ``budget`` column is a feature budget F, another unit: it is never read here.)
- The σ at the peak of an accuracy-vs-σ curve (:func:`peak_rows`).
- Where a structured projection starts to beat the dense one, read from ``rfbench cost`` rows
  (:func:`projection_crossover`; the cost summary and the beyond-the-papers figure both show it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def holm(p: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down procedure (Holm 1979): which p-values (shape (n,)) to reject at family-wise
    error rate ``alpha``; a boolean array of shape (n,).
    """
    p = np.asarray(p, dtype=float)
    n = p.size
    order = np.argsort(p, kind="stable")
    passed = p[order] < alpha / (n - np.arange(n))
    stop = int(np.argmin(passed)) if not passed.all() else n
    hit = np.zeros(n, bool)
    hit[order[:stop]] = True
    return hit


def peak_rows(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per ``by`` group, the row of the highest ``value`` among the rows that drew the most
    (``n_trials``): with σ chosen by successive elimination (classify's ``select_sigma``) the
    survivors, which is the σ the elimination selects; with fixed draws every row.
    """
    most = rows.groupby(by)["n_trials"].transform("max")
    survivors = rows[rows["n_trials"] == most]
    return survivors.loc[survivors.groupby(by)["value"].idxmax()]


def projection_budget(rows: pd.DataFrame) -> pd.Series:
    """M per row: ``projection_budget`` where the row has one, else ``m`` (shape (len(rows),),
    float)."""
    m = pd.to_numeric(rows["m"], errors="coerce").astype(float)
    if "projection_budget" not in rows.columns:
        return m
    return pd.to_numeric(rows["projection_budget"], errors="coerce").astype(float).fillna(m)


def projection_crossover(results: pd.DataFrame) -> pd.DataFrame:
    """Per coupling (``weights``), the smallest d from which the structured projection beats the
    dense one at every larger measured d (``crossover_d``, NaN if never) and the speed-up
    dense/structured at the largest d (``speedup_at_max_d``), from the ``part == "projection"`` rows
    of ``rfbench cost``.
    """
    rows = results[(results["part"] == "projection") & (results["metric"] == "time_s")]
    out = []
    for weights, group in rows.groupby("weights", sort=False):
        wide = group.pivot_table(index="d", columns="step", values="value").sort_index()
        # the faster measured d's at the end of the range: their first is the crossover
        tail = int((wide["structured"] < wide["dense"]).to_numpy()[::-1].cumprod().sum())
        cross = float(wide.index[-tail]) if tail else np.nan
        top = wide.iloc[-1]
        out.append({"weights": weights, "crossover_d": cross,
                    "speedup_at_max_d": float(top["dense"] / top["structured"])})  # fmt: skip
    return pd.DataFrame(out, columns=["weights", "crossover_d", "speedup_at_max_d"])
