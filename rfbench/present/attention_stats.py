"""Statistics of ``rfbench attention``'s result rows over heads (read from the rows, no experiment
code; used by its summary, figures and report): corrected tests, medians with intervals and
the swap-in score as a share of the gap to exact attention (docs/experiments.md#attention).

- *Beats uniform, corrected over heads*: each head's row has the one-sided z of "the estimator's
  mean output error is below uniform attention's" (z = (u − mean)/SE over the draws). Over the
  heads of one estimator at one budget and sequence length (72 on all-MiniLM-L6-v2) the p-values
  Φ(−z) are corrected by Holm's step-down (rfbench.present.statistics.holm) at the family-wise
  level of the uncorrected test, α = Φ(−significance).
- *Median over heads with a confidence interval*: the distribution-free interval of the median
  from order statistics (binomial; scipy.stats.quantile_test), treating the heads as a sample.
- *Share of the gap recovered*: (score − uniform's)/(exact's − uniform's): 0 is uniform attention,
  1 exact attention (a cosine or Spearman score of exact attention against itself is 1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from rfbench.present.statistics import holm

#: columns whose values make one family of heads (one estimator at one budget and length)
FAMILY = ("estimator", "budget", "tokens")


def beats_uniform_corrected(rows: pd.DataFrame, significance: float = 2.0) -> pd.Series:
    """Holm-corrected 'beats uniform attention' per head row.

    Parameters
    ----------
    rows : DataFrame
        ``out_rel_frob`` rows of kind ``heads`` with ``z_uniform`` (one per layer and head).
    significance : float
        The uncorrected test's z threshold; the family-wise level is Φ(−significance).

    Returns
    -------
    Series of bool, aligned with ``rows``
        False where z is missing.
    """
    out = np.zeros(len(rows), bool)
    if rows.empty:
        return pd.Series(out, index=rows.index)
    keys = [c for c in FAMILY if c in rows]
    alpha = float(stats.norm.sf(significance))
    family = rows.groupby(keys, dropna=False, sort=False).ngroup().to_numpy()
    z_all = pd.to_numeric(rows["z_uniform"], errors="coerce").to_numpy(dtype=float)
    for g in np.unique(family):
        at = np.flatnonzero((family == g) & ~np.isnan(z_all))
        if at.size:
            out[at] = holm(stats.norm.sf(z_all[at]), alpha)
    return pd.Series(out, index=rows.index)


def median_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """The median of ``values`` and its distribution-free confidence interval.

    Parameters
    ----------
    values : ndarray, shape (n,)
        Finite values (others are dropped).
    level : float

    Returns
    -------
    (median, low, high)
        nan bounds when n is too small for the level (n < 6 at 95 %).
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    median = float(np.median(x))
    ci = stats.quantile_test(x, q=median, p=0.5).confidence_interval(level)
    return median, float(ci.low), float(ci.high)


def gap_recovered(
    score: float, uniform: float, exact: float = 1.0, stderr: float | None = None
) -> tuple[float, float | None]:
    """(score − uniform)/(exact − uniform) and its standard error (uniform and exact are
    deterministic: the SE scales by the same factor). nan when uniform is already exact."""
    gap = exact - uniform
    if not gap:
        return float("nan"), None
    se = None if stderr is None or not np.isfinite(stderr) else float(stderr / abs(gap))
    return float((score - uniform) / gap), se


def swap_gaps(swap: pd.DataFrame) -> pd.DataFrame:
    """Swap-in rows plus, per score, ``<score> gap recovered``: (score − uniform's)/(1 −
    uniform's) with its standard error (:func:`gap_recovered`), per layer when the rows have one.

    Parameters
    ----------
    swap : DataFrame
        ``swap_cosine`` / ``swap_spearman`` rows, ``uniform`` among the estimators.

    Returns
    -------
    DataFrame
        ``swap`` with the gap rows appended.
    """
    keys = [c for c in ("metric", "layer") if c in swap and swap[c].notna().any()]
    extra = []
    for _, part in swap.groupby(keys, sort=False, dropna=False):
        uniform = part[part["estimator"] == "uniform"]["value"]
        if uniform.empty:
            continue
        for _, row in part[part["estimator"] != "uniform"].iterrows():
            se = row["stderr"] if pd.notna(row["stderr"]) else None
            value, gap_se = gap_recovered(row["value"], float(uniform.iloc[0]), stderr=se)
            extra.append({**row.to_dict(), "metric": f"{row['metric']} gap recovered",
                          "value": value, "stderr": gap_se})  # fmt: skip
    return pd.concat([swap, pd.DataFrame(extra)], ignore_index=True) if extra else swap
