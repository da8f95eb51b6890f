"""Spearman correlation over document pairs and its bootstrap over documents.

docs/experiments.md#similarity. The 1,225 pairs of 50 documents are not independent (a document
takes part in 49 of them), so the interval of a pair statistic resamples the documents: draw n
documents with replacement, and score every pair of resampled positions a < b whose documents
differ (a document paired with its own copy has no human score). A document drawn c times then
weighs c in each of its pairs, as in the bootstrap of a U-statistic (Arvesen, 1969, Ann. Math.
Statist. 40, "Jackknifing U-statistics"); keeping each distinct document once would score a
subsample of about 63 % of them, a narrower spread than the 50 documents have. Every method of a
run uses the same resamples, so differences between methods are paired.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: the resamples' seed: the same documents in every job, model and run (paired differences)
SEED = 20050727


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rank correlation along the last axis (average ranks for ties), as
    ``scipy.stats.spearmanr``.

    Parameters
    ----------
    x, y : ndarray, shape (..., P)
        Broadcastable.

    Returns
    -------
    ndarray, shape (...)
        nan where either side is constant or not finite.
    """
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    bad = ~(np.isfinite(x).all(axis=-1) & np.isfinite(y).all(axis=-1))
    rx = stats.rankdata(np.where(np.isfinite(x), x, 0.0), axis=-1)
    ry = stats.rankdata(np.where(np.isfinite(y), y, 0.0), axis=-1)
    rx -= rx.mean(axis=-1, keepdims=True)
    ry -= ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((rx * rx).sum(axis=-1) * (ry * ry).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rx * ry).sum(axis=-1) / den
    return np.where(bad | (den == 0), np.nan, rho)


def resamples(n: int, count: int, seed: int = SEED) -> np.ndarray:
    """``count`` bootstrap resamples of n documents: (count, n) indices drawn with replacement."""
    return np.random.default_rng([seed, n]).integers(0, n, size=(count, n))


def pair_spearman(model: np.ndarray, human: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Spearman between model and human similarities over the pairs (i, j).

    Parameters
    ----------
    model : ndarray, shape (..., n, n)
        Similarity matrices (one per draw, say).
    human : ndarray, shape (n, n)
    i, j : ndarray of int, shape (P,)

    Returns
    -------
    ndarray, shape (...)
    """
    return spearman(model[..., i, j], human[i, j])


def pair_weights(samples: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """How often each document pair (i, j) occurs among a resample's pairs of positions with
    distinct documents (module doc): c_i c_j, c the documents' counts; (B, P)."""
    n = int(max(i.max(), j.max())) + 1
    counts = np.stack([np.bincount(s, minlength=n) for s in samples]).astype(float)
    return counts[:, i] * counts[:, j]


def weighted_ranks(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The mid-ranks of x (P,) in the sample holding each x_p w_p times (ties and copies share
    their average rank), for each row of weights w (B, P): (B, P); as :func:`scipy.stats.rankdata`
    of the repeated sample."""
    values, group = np.unique(x, return_inverse=True)
    onehot = np.zeros((len(x), len(values)))
    onehot[np.arange(len(x)), group] = 1.0
    total = w @ onehot  # (B, G): the weight of each distinct value
    before = np.cumsum(total, axis=1) - total
    return (before + (total + 1) / 2)[:, group]


def weighted_spearman(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spearman's correlation of the sample holding each pair (x_p, y_p) w_p times, per row of
    w (B, P): (B,); equal to :func:`spearman` of the repeated sample (nan if either side is
    constant or x, y are not finite)."""
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        return np.full(len(w), np.nan)
    rx, ry = weighted_ranks(x, w), weighted_ranks(y, w)
    total = w.sum(axis=1, keepdims=True)
    rx -= (w * rx).sum(axis=1, keepdims=True) / total
    ry -= (w * ry).sum(axis=1, keepdims=True) / total
    den = np.sqrt((w * rx * rx).sum(axis=1) * (w * ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (w * rx * ry).sum(axis=1) / den
    return np.where(den > 0, rho, np.nan)


def bootstrap(
    models: dict[str, np.ndarray], human: np.ndarray, samples: np.ndarray
) -> dict[str, np.ndarray]:
    """Per resample, each method's Spearman over the resample's pairs (module doc),
    averaged over its draws.

    A resample's pairs are the document pairs repeated c_i c_j times (:func:`pair_weights`), so
    each resample is a weighted Spearman over the n(n − 1)/2 pairs, all resamples at once.

    Parameters
    ----------
    models : dict of str to ndarray, shape (draws, n, n)
        Similarity matrices per method (one draw for a deterministic method).
    human : ndarray, shape (n, n)
    samples : ndarray of int, shape (B, n)
        From :func:`resamples`.

    Returns
    -------
    dict of str to ndarray, shape (B,)
        The mean over the draws whose correlation is defined (nan if none is).
    """
    i, j = np.triu_indices(len(human), 1)
    w = pair_weights(samples, i, j)
    out = {}
    for name, sims in models.items():
        rho = np.stack([weighted_spearman(s[i, j], human[i, j], w) for s in sims])  # (draws, B)
        with np.errstate(invalid="ignore"):
            count = np.isfinite(rho).sum(axis=0)
            total = np.where(np.isfinite(rho), rho, 0.0).sum(axis=0)
            out[name] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return out


def interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of the finite bootstrap ``values`` (B,); nan if none is."""
    ok = values[np.isfinite(values)]
    if ok.size == 0:
        return float("nan"), float("nan")
    tail = 50 * (1 - level)
    low, high = np.percentile(ok, [tail, 100 - tail])
    return float(low), float(high)


def gap_recovered(method: np.ndarray, exact: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """(ρ_method − ρ_uniform)/(ρ_exact − ρ_uniform): 0 at uniform attention, 1 at exact (nan
    where exact and uniform agree)."""
    gap = np.asarray(exact, float) - np.asarray(uniform, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(gap != 0, (np.asarray(method, float) - uniform) / gap, np.nan)
