"""Statistics of ``rfbench attention``'s result rows over heads, read from the rows (its summary,
figures and report use them): Holm-corrected "beats uniform" (Student t p-values; deterministic
methods compared as points), medians with distribution-free
intervals and the swap-in score as a share of the gap to exact attention
(docs/experiments.md#attention).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from rfbench.present.statistics import holm

#: columns whose values make one family of heads (one estimator at one budget and length)
FAMILY = ("estimator", "budget", "tokens")


#: a head row whose standard error over the draws is at most this fraction of its value is
#: deterministic (every draw the same up to round-off: window, top-k, taylor2, a fitted map, Nyström
#: with every key as a landmark); it is compared with uniform attention as a point, not tested
DETERMINISTIC_RTOL = 1e-9


def is_deterministic(rows: pd.DataFrame) -> pd.Series:
    """Per head row, True where the draws do not vary (standard error ≤
    :data:`DETERMINISTIC_RTOL` × |value|, or zero): a point comparison with uniform, not a test.

    Parameters
    ----------
    rows : DataFrame
        Head rows with ``value`` and ``stderr``.

    Returns
    -------
    Series of bool, aligned with ``rows``.
    """
    value = pd.to_numeric(rows["value"], errors="coerce").abs()
    se = pd.to_numeric(rows["stderr"], errors="coerce") if "stderr" in rows else value * np.nan
    return (se <= DETERMINISTIC_RTOL * value) & value.notna()


def _p_values(rows: pd.DataFrame) -> np.ndarray:
    """One-sided p-values of "beats uniform" per head row (shape (rows,)): the row's
    ``z_uniform`` is (uniform − mean)/(s/√n) over its n = ``n_trials`` draws (uniform attention is
    deterministic), a one-sample t statistic, so p = P(T > z) for T ~ t(n − 1) (Student; the
    normal tail is anti-conservative at n = 10). NaN without z or with fewer than 2 draws. A row
    drawn with ``stop = "resolved"`` that stopped resolved: its anytime-valid p-value instead (at
    the cap: the t test, as with fixed draws)."""
    z = pd.to_numeric(rows["z_uniform"], errors="coerce").to_numpy(dtype=float)
    n = (
        pd.to_numeric(rows["n_trials"], errors="coerce").to_numpy(dtype=float)
        if "n_trials" in rows
        else np.full(len(rows), np.nan)
    )
    with np.errstate(invalid="ignore"):
        p = stats.t.sf(z, np.where(n >= 2, n - 1, np.nan))
    p = np.where(np.isnan(z) | ~(n >= 2), np.nan, p)
    if "stop" in rows and "p_anytime" in rows:
        # a head whose draws stopped when its sequence was resolved: its t statistic, read at a
        # data-dependent stopping time, is no test; its anytime-valid p-value is (two-sided: the
        # one-sided one is half of it on the side the mean lies, docs/experiments.md#attention-stop)
        resolved = (rows["stop"] == "resolved").to_numpy(bool)
        anytime = pd.to_numeric(rows["p_anytime"], errors="coerce").to_numpy(dtype=float)
        one_sided = np.where(z > 0, anytime / 2.0, 1.0)
        p = np.where(resolved & ~np.isnan(anytime), one_sided, p)
    return p


def beats_uniform_tests(rows: pd.DataFrame, significance: float = 2.0) -> pd.DataFrame:
    """Per head row, "beats uniform attention": the uncorrected one-sided t-test at level
    Φ(−``significance``) (``raw``), Holm's step-down over the tested heads of one :data:`FAMILY`
    at that level (``corrected``), and whether the row is a point comparison (``point``,
    :func:`is_deterministic`: no test; it beats uniform when its error is smaller).

    Parameters
    ----------
    rows : DataFrame
        ``out_rel_frob`` head rows with ``z_uniform``, ``n_trials``, ``value``, ``stderr``.
    significance : float
        The one-sided level in standard-normal units (2: α ≈ 0.023).

    Returns
    -------
    DataFrame aligned with ``rows``: bool columns ``raw``, ``corrected``, ``point``.
    """
    n = len(rows)
    raw, corrected = np.zeros(n, bool), np.zeros(n, bool)
    point = is_deterministic(rows).to_numpy(bool) if n else np.zeros(0, bool)
    if n:
        alpha = float(stats.norm.sf(significance))
        keys = [c for c in FAMILY if c in rows]
        family = rows.groupby(keys, dropna=False, sort=False).ngroup().to_numpy()
        z = pd.to_numeric(rows["z_uniform"], errors="coerce").to_numpy(dtype=float)
        p = _p_values(rows)
        tested = ~np.isnan(p) & ~point
        raw[tested] = p[tested] < alpha
        for g in np.unique(family[tested]):
            at = np.flatnonzero((family == g) & tested)
            corrected[at] = holm(p[at], alpha)
        raw[point] = corrected[point] = z[point] > 0  # the sign of uniform − value
    return pd.DataFrame({"raw": raw, "corrected": corrected, "point": point}, index=rows.index)


def beats_uniform_corrected(rows: pd.DataFrame, significance: float = 2.0) -> pd.Series:
    """Per head row, "beats uniform attention" with Holm's step-down over the heads of one
    :data:`FAMILY`: the ``corrected`` column of :func:`beats_uniform_tests` (a Series of bool
    aligned with ``rows``, False where z is missing)."""
    return beats_uniform_tests(rows, significance)["corrected"]


def median_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """The median of ``values`` (shape (n,), errors: lower is better) and its distribution-free
    confidence interval (scipy.stats.quantile_test): (median, low, high), NaN bounds when n is too
    small for ``level``. A non-finite value (a head whose estimate broke down) counts as the worst,
    +inf: never dropped, so a method does not look better for failing on some heads.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    worst = np.finfo(float).max  # +inf's stand-in for the order statistics, mapped back below
    x = np.where(np.isfinite(x), x, worst)
    median = float(np.median(x))
    ci = stats.quantile_test(x, q=median, p=0.5).confidence_interval(level)
    back = [float(np.inf) if v >= worst else float(v) for v in (median, ci.low, ci.high)]
    return back[0], back[1], back[2]


def median_ci_text(values: np.ndarray | pd.Series) -> str:
    """``median [low, high]`` (3 significant digits; the interval left out where the values are
    too few for one, "—" where there are none), from :func:`median_ci`; with non-finite values,
    how many and that they count as the worst."""
    x = np.asarray(values, dtype=float)
    median, low, high = median_ci(x)
    if np.isnan(median):
        return "—"
    ci = f" [{low:.3g}, {high:.3g}]" if not (np.isnan(low) or np.isnan(high)) else ""
    bad = int(np.sum(~np.isfinite(x)))
    note = f" ({bad} of {x.size} non-finite, counted as worst)" if bad else ""
    return f"{median:.3g}{ci}{note}"


def beats_text(part: pd.DataFrame) -> str:
    """ "k % (j %) of n": the share of head rows beating uniform attention with Holm's
    correction and without (:func:`beats_uniform_tests`); rows whose draws do not vary are point
    comparisons, said so ("k % of n, point comparison": no test)."""
    tests = beats_uniform_tests(part)
    if len(part) and tests["point"].all():
        return f"{tests['corrected'].mean():.0%} of {len(part)}, point comparison"
    text = f"{tests['corrected'].mean():.0%} ({tests['raw'].mean():.0%}) of {len(part)}"
    points = int(tests["point"].sum())
    return text + (f" ({points} by point comparison)" if points else "")


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
    """The swap-in rows (``swap_cosine`` / ``swap_spearman``, ``uniform`` among the estimators)
    with, per score and layer, the rows ``<score> gap recovered`` (:func:`gap_recovered`) appended.
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


#: the real-attention runs of the paper reproduction, one per (model, mask): result name -> the
#: config that writes it (all-MiniLM-L6-v2 and paraphrase-MiniLM-L3-v2, bidirectional and causal)
RUNS = {
    "beyond-attention": "configs/beyond/attention.toml",
    "beyond-attention-causal": "configs/beyond/attention-causal.toml",
    "beyond-attention-l3": "configs/beyond/attention-l3.toml",
    "beyond-attention-l3-causal": "configs/beyond/attention-l3-causal.toml",
}


def model_and_mask(df: pd.DataFrame) -> tuple[str, str]:
    """(model, mask) of one attention result: the model's name from the dataset label
    ``<model>@<digest>[+causal]``, the mask 'causal' when the rows carry ``causal`` true."""
    labels = df["dataset"].dropna() if "dataset" in df else pd.Series(dtype=object)
    label = str(labels.iloc[0]) if len(labels) else "?"
    causal = "causal" in df and df["causal"].fillna(False).astype(bool).any()
    return label.split("@")[0].removesuffix("+causal"), "causal" if causal else "bidirectional"


def longest(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows at the longest sequence (all rows when they carry no length)."""
    if "tokens" not in rows or rows["tokens"].isna().all():
        return rows
    return rows[rows["tokens"] == rows["tokens"].max()]


def output_errors(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(heads, uniform): the ``out_rel_frob`` rows of the heads (feature budget in ``budget``; older
    files: their ``m``) and of uniform attention, at the longest sequence.
    """
    out = df[df["metric"] == "out_rel_frob"]
    heads = longest(out[out["kind"] == "heads"])
    if "budget" not in heads or heads["budget"].isna().all():
        heads = heads.assign(budget=heads["m"])
    base = out[(out["kind"] == "baselines") & (out["estimator"] == "uniform")]
    return heads, base[base["tokens"] == heads["tokens"].max()] if "tokens" in base else base


def is_local(rows: pd.DataFrame) -> bool:
    """Rows of a local method (a window or top-k keys), not of a feature map alone."""
    return any(c in rows and rows[c].notna().any() for c in ("window", "top_k"))


def is_random_map(name: str, rows: pd.DataFrame) -> bool:
    """A random feature map: a ``<component>@<coupling>`` registry name, no local keys."""
    return "@" in name and not is_local(rows)


def relative_to_uniform(heads: pd.DataFrame, uniform: pd.DataFrame) -> np.ndarray:
    """Per head (shape (heads,)), a method's output error over uniform attention's on the same head
    (< 1: it beats uniform); ``heads`` and ``uniform`` are rows with ``layer``, ``head``, ``value``.
    """
    keys = ["layer", "head"]
    both = heads[[*keys, "value"]].merge(uniform[[*keys, "value"]], on=keys, suffixes=("", "_u"))
    return (both["value"] / both["value_u"]).to_numpy(dtype=float)


def fitting_texts(df: pd.DataFrame) -> tuple[str, str] | None:
    """(the text fitted methods were fitted on, the text every method was measured on), as the
    rows say; None for rows without them (``--data`` halves name no text, older files none)."""
    if "text" not in df or "fit_text" not in df:
        return None
    pairs = df[["fit_text", "text"]].dropna().drop_duplicates()
    return (str(pairs.iloc[0, 0]), str(pairs.iloc[0, 1])) if len(pairs) else None


def at_largest_budget(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`output_errors` with the heads' rows at the largest feature budget only."""
    heads, uniform = output_errors(df)
    return heads[heads["budget"] == heads["budget"].max()], uniform


def best_map(heads: pd.DataFrame) -> str | None:
    """The feature map (no window or top-k keys) with the lowest median output error."""
    medians = {
        est: float(np.median(part["value"]))
        for est, part in heads.groupby("estimator", sort=False)
        if not is_local(part)
    }
    return min(medians, key=medians.get) if medians else None
