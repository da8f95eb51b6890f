"""Real data sets: built-in (scikit-learn), UCI files, MNIST, CIFAR-10 (DESIGN §7).

>>> ds = load("wine")                         # built in, works offline
>>> parts = split(load("abalone"), "simrf")   # 95/5, default_rng(42), z-scored: spec/simrf.md §3.5
>>> parts = split(load("car"), "derf")        # 90/5/5 train/validation/test: spec/derf.md §3.2
>>> pts = standardize_and_scale(load("boston"), norm=1.0)  # HRF Table 1: spec/hrf.md §3.3
>>> img = load("mnist")                       # 8x8 area-resized, [0, 1], 64-d: spec/derf.md §3.1

Files live in ``$RFBENCH_DATA`` (default: the per-user cache dir), in the layout of
../shared/data, and are checked against pinned sha256 values on download and on every load.
``$RFBENCH_DATA_URL`` points downloads at a mirror laid out the same way.
"""

from rfbench.datasets.api import available, check, fetch, load, local_status, options
from rfbench.datasets.cache import data_root
from rfbench.datasets.dataset import Dataset, Split
from rfbench.datasets.errors import DataError
from rfbench.datasets.preprocess import PROTOCOLS, split, standardize_and_scale
from rfbench.datasets.registry import DATASETS, DatasetInfo, FileSpec

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
