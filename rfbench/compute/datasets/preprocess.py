"""The loaded data (:class:`Dataset`, a small immutable record with every preprocessing choice in
its ``metadata``) and its preprocessing as the papers' code did it: fixed permutation splits,
z-scoring with training statistics, norm scaling for the QMC table, grayscale and area resizing
for the image sets (each function cites its paper and docs/experiments.md section)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Dataset:
    """Rows ``X`` (n, d) float64 and labels ``y`` (n,) — int64 class indices into ``classes``, or
    float64 targets when ``classes`` is empty (regression). ``variant`` marks a non-canonical
    version (e.g. the CIFAR-10 PNG sample, the MNIST test split); ``label`` is the name results
    should carry. ``metadata`` records every preprocessing choice (JSON-serialisable)."""

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    classes: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    variant: str = ""

    @property
    def label(self) -> str:
        return f"{self.name}[{self.variant}]" if self.variant else self.name

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def onehot(self) -> np.ndarray:
        """(n, n_classes) float64 one-hot labels (the ``Y`` of the kernel-regression classifier)."""
        if not self.classes:
            raise ValueError(f"{self.label} is a regression data set: no classes to one-hot")
        return np.eye(self.n_classes)[self.y]

    def take(self, rows: np.ndarray | slice, **meta: Any) -> Dataset:
        """The given rows, with extra metadata entries."""
        return replace(self, X=self.X[rows], y=self.y[rows], metadata={**self.metadata, **meta})

    def with_X(self, X: np.ndarray, **meta: Any) -> Dataset:
        """The same rows with transformed features, with extra metadata entries."""
        return replace(self, X=X, metadata={**self.metadata, **meta})

    def __repr__(self) -> str:
        kind = f"{self.n_classes} classes" if self.classes else "regression"
        return f"Dataset({self.label!r}, {self.n} x {self.d}, {kind})"


@dataclass(frozen=True)
class Split:
    """A fixed train/(validation)/test split; ``val`` is None for the SimRF 95/5 protocol."""

    train: Dataset
    test: Dataset
    val: Dataset | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        parts = [f"train={self.train.n}", f"test={self.test.n}"]
        if self.val is not None:
            parts.insert(1, f"val={self.val.n}")
        return f"Split({self.train.label!r}, {', '.join(parts)})"


# (train, validation, test) in percent; sizes are floor(p·n/100) each, exactly the authors'
# int(n·0.95) / int(n·0.05) (checked equal for every n < 200000). Train is the head of the
# permutation, test its tail, validation right after train; the 0-2 leftover rows are unused.
PROTOCOLS: dict[str, tuple[int, int, int]] = {"simrf": (95, 0, 5), "derf": (90, 5, 5)}
GRAY_WEIGHTS = (0.299, 0.587, 0.114)  # ITU-R BT.601 luma, DERF; docs/experiments.md#derf-a3


def split_sizes(n: int, protocol: str) -> tuple[int, int, int]:
    """(train, validation, test) sizes of an ``n``-row data set under ``protocol``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown split protocol {protocol!r}; allowed: {', '.join(PROTOCOLS)}")
    return tuple(n * p // 100 for p in PROTOCOLS[protocol])  # type: ignore[return-value]


def min_rows(protocol: str) -> int:
    """The fewest rows whose ``protocol`` split has a row in every part it uses."""
    shares = [p for p in split_sizes(100, protocol) if p]
    return -(-100 // min(shares))


def zscore_stats(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Column mean and population std (ddof=0); constant columns get std 1 (no NaN), listed."""
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    constant = np.flatnonzero(std == 0)
    std[constant] = 1.0
    return mean, std, constant.tolist()


def split(
    ds: Dataset,
    protocol: str = "simrf",
    *,
    seed: int = 42,
    standardize: bool = True,
    subset: tuple[int, int] | None = None,
) -> Split:
    """A fixed permutation split (SimRF Sec. 5.3, Fig. 8; docs/experiments.md#simrf-fig8; DERF
    Sec. 5.2, Fig. 3; docs/experiments.md#derf-fig3).

    ``protocol``: ``"simrf"`` = 95/5 train/test, ``"derf"`` = 90/5/5 train/validation/test.
    The permutation is ``np.random.default_rng(seed).permutation(n)`` (seed 42 in the SimRF code;
    the DERF paper gives none, 42 is ours). With ``standardize`` every column, one-hot columns
    included, is z-scored with the training mean and population std. ``subset=(a, b)`` keeps the
    first ``a`` training and ``b`` validation/test rows after standardising (the SimRF code's
    nursery/chess restriction, docs/methods.md#simrf-erratum-9; off by default).
    """
    n = ds.n
    n_train, n_val, n_test = split_sizes(n, protocol)
    if min(n_train, n_test) == 0 or (protocol == "derf" and n_val == 0):
        raise ValueError(
            f"{ds.label} has {n} rows: too few for the {protocol} split "
            f"(at least {min_rows(protocol)})"
        )
    perm = np.random.default_rng(seed).permutation(n)
    parts = {
        "train": perm[:n_train],
        "val": perm[n_train : n_train + n_val] if n_val else None,
        "test": perm[n - n_test :],
    }
    meta: dict[str, Any] = {
        "split": protocol,
        "split_percent": list(PROTOCOLS[protocol]),
        "split_seed": seed,
        "split_sizes": [n_train, n_val, n_test],
        "split_unused_rows": n - n_train - n_val - n_test,
        "standardize": "zscore(train mean, train std ddof=0)" if standardize else "none",
    }
    if standardize:
        mean, std, constant = zscore_stats(ds.X[parts["train"]])
        meta["constant_columns"] = [ds.feature_names[j] for j in constant]
    if subset is not None:
        meta["subset"] = list(subset)
    out: dict[str, Dataset | None] = {}
    for key, rows in parts.items():
        if rows is None:
            out[key] = None
            continue
        if subset is not None:
            rows = rows[: subset[0] if key == "train" else subset[1]]
        part = ds.take(rows, part=key, **meta)
        out[key] = part.with_X((part.X - mean) / std) if standardize else part
    return Split(out["train"], out["test"], out["val"], meta)  # type: ignore[arg-type]


def standardize_and_scale(ds: Dataset, *, norm: float = 1.0, mode: str = "rows") -> Dataset:
    """HRF Table 1 preprocessing (docs/experiments.md#hrf-table1; the paper states none): z-score
    each column over all rows (ddof=0), then scale to L2 norm ``norm``: ``mode="rows"`` scales every
    row to norm ``norm`` (equal norms, the setting of HRF's theory); ``"max"`` / ``"mean"`` scale
    all rows by one factor so that the largest / mean row norm is ``norm`` (keeps relative
    norms)."""
    if not norm > 0:
        raise ValueError(f"norm must be > 0, got {norm}")
    mean, std, constant = zscore_stats(ds.X)
    Z = (ds.X - mean) / std
    lengths = np.linalg.norm(Z, axis=1)
    if mode == "rows":
        if np.any(lengths == 0):
            raise ValueError(f"{ds.label}: a row is all-mean (norm 0) and cannot be scaled")
        Z = Z * (norm / lengths)[:, None]
    elif mode in ("max", "mean"):
        Z = Z * (norm / getattr(np, mode)(lengths))
    else:
        raise ValueError(f"unknown scaling mode {mode!r}; allowed: rows, max, mean")
    return ds.with_X(
        Z,
        qmc_preprocessing=f"zscore(all rows, ddof=0) then {mode}-scaled to L2 norm {norm:g}",
        qmc_norm=float(norm),
        qmc_mode=mode,
    )


def area_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) weights of exact area (box) resampling: output pixel i averages the input
    interval [i·s, (i+1)·s), s = n_in/n_out, weighting each input pixel by its overlap. For an
    integer ratio this is the plain block mean (CIFAR 32→8 = 4x4 blocks); 28→8 covers 3.5 pixels
    per output, with fractional weights at the edges (as OpenCV's INTER_AREA; Pillow's BOX filter
    instead gives whole pixels to the output containing their centre)."""
    edges_out = np.arange(n_out + 1) * (n_in / n_out)
    lo = np.maximum(edges_out[:-1, None], np.arange(n_in)[None, :])
    hi = np.minimum(edges_out[1:, None], np.arange(1, n_in + 1)[None, :])
    return np.clip(hi - lo, 0.0, None) * (n_out / n_in)


def area_resize(images: np.ndarray, size: int, chunk: int = 10_000) -> np.ndarray:
    """Area-resize (n, h, w) or (n, h, w, channels) images to (n, size, size[, channels])
    float64 as ``A @ img @ Bᵀ`` per channel (two batched matrix products), chunked."""
    n, h, w = images.shape[:3]
    ch = int(np.prod(images.shape[3:], dtype=int))
    A, Bt = area_matrix(h, size), np.ascontiguousarray(area_matrix(w, size).T)
    out = np.empty((n, size, size, ch))
    for start in range(0, n, chunk):
        block = np.asarray(images[start : start + chunk], dtype=np.float64)
        k = len(block)
        rows = (A @ block.reshape(k, h, w * ch)).reshape(k, size, w, ch)  # along h
        out[start : start + k] = (rows.transpose(0, 1, 3, 2) @ Bt).transpose(0, 1, 3, 2)
    return out.reshape((n, size, size) + images.shape[3:])


def grayscale(rgb: np.ndarray) -> np.ndarray:
    """ITU-R 601 luma of (..., 3) RGB values (DERF; docs/experiments.md#derf-a3), float64."""
    r, g, b = (np.asarray(rgb[..., c], dtype=np.float64) for c in range(3))
    return GRAY_WEIGHTS[0] * r + GRAY_WEIGHTS[1] * g + GRAY_WEIGHTS[2] * b
