"""The public functions: ``load``, ``available``, ``local_status``, ``fetch``; the loader of each
kind of data set (the built-in ones, inside scikit-learn, are loaded here)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rfbench.compute.datasets import cache, errors, images, uci, user
from rfbench.compute.datasets.dataset import Dataset
from rfbench.compute.datasets.registry import DATASETS, DatasetInfo, get


def load_builtin(info: DatasetInfo, *, download: bool = True) -> Dataset:
    """``sklearn.datasets.load_wine`` (178 x 13, 3 classes) or ``load_digits`` (1797 x 64,
    pixel counts 0..16, 10 classes), unchanged (no download, no file). ``download`` is accepted
    and ignored."""
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


LOADERS: dict[str, Callable[..., Dataset]] = {
    "table": uci.load_table,
    "builtin": load_builtin,
    "mnist": images.load_mnist,
    "cifar10": images.load_cifar10,
}


def options(name: str) -> dict[str, Any]:
    """The keyword options of a data set's loader with their defaults (a user file has none)."""
    if user.is_reference(name):
        return {}
    sig = inspect.signature(LOADERS[get(name).kind])
    return {k: p.default for k, p in sig.parameters.items() if p.kind is p.KEYWORD_ONLY}


def load(name: str, **opts: Any) -> Dataset:
    """Load a data set by name (case-insensitive; aliases ``krkopt``, ``housing``).

    A user's table is named ``PATH#TARGET[@SHA]`` (see :mod:`rfbench.compute.datasets.user`).
    Files are verified against their pinned sha256 on every load; a missing file is downloaded
    into the data folder unless ``download=False``. Options per kind: UCI tables ``compat``
    (the authors' last-line drop); ``mnist`` ``split``, ``size``; ``cifar10`` ``variant``,
    ``split``, ``size``, ``grayscale``. Every failure is a one-line :class:`DataError`.
    """
    if user.is_reference(name):
        if opts:
            raise errors.DataError(f"data file {name!r} takes no options (got {', '.join(opts)})")
        return user.load_table(name)
    info = get(name)
    allowed = options(info.name)
    bad = sorted(set(opts) - set(allowed))
    if bad:
        raise errors.DataError(
            f"data set {info.name!r} has no option {', '.join(bad)}; "
            f"allowed: {', '.join(allowed) or 'none'}"
        )
    return LOADERS[info.kind](info, **opts)


def check(name: str) -> str:
    """``name`` if it names a usable data set — a registry name, or a readable labelled user
    table ``PATH#TARGET`` (:mod:`rfbench.compute.datasets.user`) — else a one-line DataError."""
    if user.is_reference(name):
        user.load_table(name)
    else:
        get(name)
    return name


def _variant_present(info: DatasetInfo, variant: str, verify: bool) -> bool:
    files = info.variants[variant]
    present = all(map(cache.present, files))
    return present and (not verify or all(cache.good(info.name, spec) for spec in files))


def available(name: str, verify: bool = False) -> bool:
    """Whether ``name`` loads without the network: built in, or some variant's files present
    (and, with ``verify``, matching their checksums)."""
    info = get(name)
    if info.kind == "builtin":
        return True
    return any(_variant_present(info, v, verify) for v in info.variants)


def local_status(name: str) -> str:
    """For listings: built-in | yes | yes (test split only) | sample only | no (cheap check)."""
    info = get(name)
    if info.kind == "builtin":
        return "built-in"
    have = [v for v in info.variants if _variant_present(info, v, verify=False)]
    if not have:
        return "no"
    if info.kind == "mnist" and have == ["test"]:
        return "yes (test split only)"
    if info.kind == "cifar10" and "full" not in have:
        return "sample only (220 PNG)"
    return "yes"


@dataclass(frozen=True)
class FetchResult:
    dataset: str
    path: Path
    status: str  # ok | downloaded | skipped (...)


def fetch(name: str, *, base_url: str | None = None) -> list[FetchResult]:
    """Download and verify every file of ``name`` (or of every data set for ``"all"``). A file
    already present is verified; a corrupt one is downloaded again. Files with no public URL
    (the CIFAR-10 PNG sample) are skipped unless present or a mirror is configured."""
    infos = list(DATASETS.values()) if name == "all" else [get(name)]
    results = []
    for info in infos:
        for spec in info.files:
            path = cache.locate(spec)
            if not cache.urls(spec, base_url) and not cache.present(spec):
                results.append(FetchResult(info.name, path, "skipped (offline copy only)"))
                continue
            results.append(
                FetchResult(info.name, path, cache.fetch(info.name, spec, base_url=base_url))
            )
    return results
