"""The point sets of the DERF variance experiment: six regimes of pairs of sets (𝒳, 𝒴) of L points
in R^d at scale σ (docs/experiments.md#derf-fig2, #derf-a3).

Image pools come from ``rfbench.compute.datasets``; a regime whose data are not available locally is
reported by :func:`missing_data` (the experiment skips it or stops, as configured).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from rfbench.compute.datasets import DataError, available, load, local_status

REGIMES: tuple[str, ...] = ("normal", "sphere", "heterogen", "mnist", "cifar10", "mnist/cifar10")
IMAGE_DIM = 64


@dataclass(frozen=True)
class Pool:
    """The images of one data set as rows (n, 64) and the label results carry."""

    X: np.ndarray
    label: str


def image_sets(regime: str) -> tuple[str, ...]:
    """The image data sets a regime needs (empty for the synthetic regimes)."""
    return tuple(part for part in regime.split("/") if part in ("mnist", "cifar10"))


def missing_data(regime: str) -> str | None:
    """Why a regime cannot run here (its data are not available locally), or None."""
    absent = [name for name in image_sets(regime) if not available(name)]
    if not absent:
        return None
    names = ", ".join(absent)
    return (
        f"data set(s) {names} not available locally; fix: run `rfbench data fetch {absent[0]}`, "
        "or set RFBENCH_DATA to a folder that holds them"
    )


@functools.lru_cache(maxsize=4)
def image_pool(name: str) -> Pool:
    """MNIST (the train split if present, else test) or CIFAR-10 (the full train split, else the
    whole PNG sample) as 64-d rows in [0, 1]. Never downloads: :func:`missing_data` comes first."""
    if name == "cifar10" and local_status("cifar10").startswith("sample"):
        ds = load("cifar10", variant="sample", split="all", download=False)
    else:
        ds = load(name, download=False)
    if ds.d != IMAGE_DIM:
        raise DataError(f"data set {name!r} gives {ds.d}-d rows, the regime needs {IMAGE_DIM}")
    X = np.ascontiguousarray(ds.X)
    X.setflags(write=False)
    return Pool(X, ds.label)


def _draw_images(rng: np.random.Generator, pool: Pool, L: int) -> np.ndarray:
    replace = len(pool.X) < L
    return pool.X[rng.choice(len(pool.X), size=L, replace=replace)]


def regime_label(regime: str) -> str:
    """The ``dataset`` column of a regime: the image pools' labels ("" when synthetic)."""
    return "/".join(image_pool(name).label for name in image_sets(regime))


def regime_note(regime: str, L: int) -> str:
    """How the image sets are drawn, when it deviates from "without replacement"."""
    notes = [
        f"{pool.label}: {len(pool.X)} images < L = {L}, drawn with replacement"
        for pool in (image_pool(name) for name in image_sets(regime))
        if len(pool.X) < L
    ]
    return "; ".join(notes)


def sample_sets(
    rng: np.random.Generator, regime: str, sigma: float, d: int, L: int
) -> tuple[np.ndarray, np.ndarray]:
    """One pair of sets (X, Y), each (L, d), of a regime at scale σ (DERF Sec. 5.1, Figs. 1-2;
    docs/experiments.md#derf-fig2)."""
    if regime == "normal":
        return sigma * rng.standard_normal((L, d)), sigma * rng.standard_normal((L, d))
    if regime == "sphere":
        g = rng.standard_normal((2, L, d))
        g /= np.linalg.norm(g, axis=-1, keepdims=True)
        return sigma * g[0], sigma * g[1]
    if regime == "heterogen":
        return sigma * rng.standard_normal((L, d)), sigma * (1.0 + rng.standard_normal((L, d)))
    if regime in ("mnist", "cifar10", "mnist/cifar10"):
        if d != IMAGE_DIM:
            raise ValueError(f"image regimes have d = {IMAGE_DIM}, got d = {d}")
        x_name, y_name = (regime, regime) if "/" not in regime else regime.split("/")
        X = _draw_images(rng, image_pool(x_name), L)
        Y = _draw_images(rng, image_pool(y_name), L)
        return sigma * X, sigma * Y
    raise ValueError(f"unknown regime {regime!r}; allowed: {', '.join(REGIMES)}")
