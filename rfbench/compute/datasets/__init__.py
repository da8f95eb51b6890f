"""Real data sets: built-in (scikit-learn), UCI files, MNIST, CIFAR-10 (docs/architecture.md#data;
preprocessing: docs/experiments.md#datasets).

>>> ds = load("wine")                         # built in, works offline
>>> parts = split(load("abalone"), "simrf")   # 95/5, z-scored: docs/experiments.md#simrf-fig8
"""

from rfbench.compute.datasets.api import available, check, fetch, load, local_status, options
from rfbench.compute.datasets.cache import data_root
from rfbench.compute.datasets.errors import DataError
from rfbench.compute.datasets.preprocess import (
    PROTOCOLS,
    Dataset,
    Split,
    split,
    standardize_and_scale,
)
from rfbench.compute.datasets.registry import DATASETS, DatasetInfo, FileSpec

__all__ = [
    "DATASETS",
    "PROTOCOLS",
    "DataError",
    "Dataset",
    "DatasetInfo",
    "FileSpec",
    "Split",
    "available",
    "check",
    "data_root",
    "fetch",
    "load",
    "local_status",
    "options",
    "split",
    "standardize_and_scale",
]
