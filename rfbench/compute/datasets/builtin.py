"""Built-in data sets inside scikit-learn (no download, no file): ``wine`` and ``digits``."""

from __future__ import annotations

import numpy as np

from rfbench.compute.datasets.dataset import Dataset
from rfbench.compute.datasets.registry import DatasetInfo


def load_builtin(info: DatasetInfo, *, download: bool = True) -> Dataset:
    """``sklearn.datasets.load_wine`` (178 x 13, 3 classes) or ``load_digits`` (1797 x 64,
    pixel counts 0..16, 10 classes), unchanged. ``download`` is accepted and ignored."""
    import sklearn
    from sklearn import datasets as skd

    bunch = {"wine": skd.load_wine, "digits": skd.load_digits}[info.name]()
    names = tuple(str(f) for f in bunch.feature_names)
    classes = tuple(str(c) for c in bunch.target_names)
    meta = {
        "dataset": info.name,
        "file": f"scikit-learn {sklearn.__version__} load_{info.name}()",
        "label_encoding": "scikit-learn target",
    }
    X = np.asarray(bunch.data, dtype=np.float64)
    return Dataset(info.name, X, np.asarray(bunch.target, dtype=np.int64), names, classes, meta)
