"""The attention experiment under ``--causal``: its jobs (:func:`point`), its check
(:func:`validate`) and its forms (:data:`FORMS`); the math is
rfbench.compute.experiments.attention.causal (docs/experiments.md#causal-attention).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rfbench.compute.experiments import ConfigError
from rfbench.compute.experiments.attention import causal
from rfbench.compute.experiments.attention import data as source

#: the causal forms of the heads and baselines jobs (heads.head_rows, heads.baseline_rows)
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
