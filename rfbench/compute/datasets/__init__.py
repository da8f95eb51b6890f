"""Real data sets: built-in (scikit-learn), UCI files, MNIST, CIFAR-10 (docs/architecture.md#data).

>>> ds = load("wine")                         # built in, works offline
>>> # 95/5, default_rng(42), z-scored: docs/experiments.md#simrf-fig8
>>> parts = split(load("abalone"), "simrf")
>>> # 90/5/5 train/validation/test: docs/experiments.md#derf-fig3
>>> parts = split(load("car"), "derf")
>>> # HRF Table 1: docs/experiments.md#hrf-table1
>>> pts = standardize_and_scale(load("boston"), norm=1.0)
>>> img = load("mnist")  # 8x8 area-resized, [0, 1], 64-d: docs/experiments.md#derf-fig2

Files live in ``$RFBENCH_DATA`` (default: the per-user cache dir), in the layout of
../shared/data, and are checked against pinned sha256 values on download and on every load.
``$RFBENCH_DATA_URL`` points downloads at a mirror laid out the same way.
"""

from rfbench.compute.datasets.api import available, check, fetch, load, local_status, options
from rfbench.compute.datasets.cache import data_root
from rfbench.compute.datasets.dataset import Dataset, Split
from rfbench.compute.datasets.errors import DataError
from rfbench.compute.datasets.preprocess import PROTOCOLS, split, standardize_and_scale
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
