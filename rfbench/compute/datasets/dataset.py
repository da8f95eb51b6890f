"""The loaded data: a small immutable record with every preprocessing choice in ``metadata``."""

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
