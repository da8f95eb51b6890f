"""The attention experiment under ``--causal``: its jobs (:func:`point`), per-draw forms
(:data:`FORMS`), baseline rows and swap-in attention; the math is
rfbench.compute.experiments.attention.causal (docs/experiments.md#causal-attention).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rfbench.compute.experiments import ConfigError
from rfbench.compute.experiments.attention import causal
from rfbench.compute.experiments.attention import data as source
from rfbench.compute.results import BOOL, register_parameter

register_parameter("causal", BOOL)

#: the causal forms of the heads jobs (heads.head_rows's ``am``)
FORMS = causal.FORMS


def validate(config: Mapping[str, Any]) -> None:
    """A causal run on the user's heads needs as many keys as queries (one ConfigError line)."""
    if config["causal"] and config["data"]:
        q, k, _ = source.load_qkv(config["data"])
        if q.shape[1] != k.shape[1]:
            raise ConfigError(
                f"--causal needs as many keys as queries: {config['data']} has {q.shape[1]} "
                f"queries and {k.shape[1]} keys per head"
            )


def point(config: Mapping[str, Any], label: str) -> dict[str, Any]:
    """The job parameters a causal run adds ({} for a bidirectional run, whose jobs and seeds
    stay as they were)."""
    return {"causal": True, "dataset": f"{label}+causal"} if config["causal"] else {}


def uniform_attention(
    layer: int, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray
) -> np.ndarray:
    """Causal uniform attention in the encoder: output i the mean of the unmasked values 0..i.

    Parameters
    ----------
    layer : int
        Unused (the AttentionFn signature).
    q, k, v : ndarray, shape (B, heads, T, d_head)
    mask : ndarray of bool, shape (B, T)

    Returns
    -------
    ndarray, shape (B, heads, T, d_head)
    """
    w = mask[:, None, :, None].astype(v.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.cumsum(v * w, axis=2) / np.cumsum(w, axis=2)
