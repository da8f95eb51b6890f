"""The standard error of a mean, written once for every experiment and summary."""

from __future__ import annotations

import numpy as np


def standard_error(values: np.ndarray, axis: int | None = None) -> float | np.ndarray | None:
    """σ̂/√n: the sample standard deviation (ddof = 1) of ``values`` over √n.

    Parameters
    ----------
    values : array_like
        The sample, in its own dtype (no cast: a float32 sample keeps its arithmetic).
    axis : int, optional
        The axis holding the n draws; None: every value is one draw.

    Returns
    -------
    float or None, or ndarray
        With ``axis`` None, a float, or None for fewer than two values (no spread to measure);
        with an axis, the array of standard errors over it.
    """
    v = np.asarray(values)
    if axis is not None:
        return v.std(axis=axis, ddof=1) / np.sqrt(v.shape[axis])
    return float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else None


def mean_se(values: np.ndarray) -> tuple[float, float | None]:
    """(mean, standard error) of a sample (:func:`standard_error`; None for one value)."""
    v = np.asarray(values)
    return float(v.mean()), standard_error(v)
