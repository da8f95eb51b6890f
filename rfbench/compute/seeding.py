"""Deterministic per-job random streams (docs/architecture.md#seeding).

A job's generator is ``SeedSequence(root, spawn_key=stable_hash(key))``: it depends only on the root
seed and the job's key, never on job order, worker count or backend. ``stable_hash`` is SHA-256 of a
canonical JSON encoding, so it is identical across processes and Python versions (unlike ``hash``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np


def _canonical(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, list | tuple):
        return [_canonical(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and obj.is_integer():
        return int(obj)  # 1.0 and 1 name the same parameter point
    return obj


def canonical_json(key: Any) -> str:
    """A canonical JSON text for a job key (sorted keys, no whitespace)."""
    return json.dumps(_canonical(key), sort_keys=True, separators=(",", ":"), default=str)


def stable_hash(key: Any, words: int = 4) -> tuple[int, ...]:
    """SHA-256 of the canonical key as ``words`` unsigned 32-bit integers."""
    digest = hashlib.sha256(canonical_json(key).encode()).digest()
    return tuple(int.from_bytes(digest[4 * i : 4 * i + 4], "little") for i in range(words))


def job_rng(root_seed: int, key: Any) -> np.random.Generator:
    """The Generator of one job: a pure function of (root seed, job key)."""
    if root_seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {root_seed}")
    seeds = np.random.SeedSequence(root_seed, spawn_key=stable_hash(key))
    return np.random.Generator(np.random.PCG64(seeds))


def substream(rng: np.random.Generator, key: Any) -> np.random.Generator:
    """An independent Generator for one part of a job (an estimator, a batch of draws), keyed.

    It is derived from the seed sequence ``rng`` was created from, not from its current state, so
    it does not depend on what the job drew before or on which other parts the job holds: adding
    an estimator to a run leaves every other estimator's draws bit-identical.

    Parameters
    ----------
    rng : numpy.random.Generator
        The job's generator (``job_rng``), or a substream of it.
    key : JSON-encodable
        What the part is, e.g. ``{"estimator": "positive@iid"}`` or ``("batch", 3)``.

    Returns
    -------
    numpy.random.Generator
    """
    parent = rng.bit_generator.seed_seq
    seeds = np.random.SeedSequence(
        parent.entropy, spawn_key=(*parent.spawn_key, *stable_hash(key)), pool_size=parent.pool_size
    )
    return np.random.Generator(np.random.PCG64(seeds))
