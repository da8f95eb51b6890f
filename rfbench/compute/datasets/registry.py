"""The data set registry: files with pinned checksums, URLs, parser options, source, licence.

The table itself is data, in ``registry.toml`` beside this module (docs/experiments.md#datasets);
paths are relative to the data folder (``RFBENCH_DATA``), which downloads fill file for file.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from rfbench.compute.datasets.errors import unknown

UCI_LICENCE = "CC BY 4.0"
UCI_SOURCE = "UCI (same bytes in the SimRF authors' repo)"


@dataclass(frozen=True)
class FileSpec:
    """One file: where it lives under the data folder, its checksum, and where to download it.

    ``sha256``/``size`` are of the content: for ``gz`` files, of the decompressed bytes (so any
    mirror's .gz works); for a ``manifest`` (a SHA256SUMS file), of the manifest itself, and every
    file it lists (in the same folder) is verified too. ``stored`` is the size of the file as
    stored/downloaded, for listings. A file with no URL can only come from a mirror or a copy.
    """

    path: str
    sha256: str
    size: int
    urls: tuple[str, ...] = ()
    gz: bool = False
    manifest: bool = False
    stored: int | None = None


@dataclass(frozen=True)
class Table:
    """How to parse a delimited UCI table (the authors' ``load_data_onehot`` options)."""

    columns: tuple[str, ...]
    sep: str | None = ","  # None: any whitespace
    # one-hot encoded (SimRF Sec. 5.3, Fig. 8; docs/experiments.md#simrf-fig8 TEXT_FEAT_INDICES)
    categorical: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()  # not used at all (yeast's sequence name)
    label: str = ""  # default: the last column
    regression: bool = False  # label is a numeric target, not a class


@dataclass(frozen=True)
class DatasetInfo:
    """A registry row. ``variants`` maps a variant name to its files (first = preferred)."""

    name: str
    kind: str  # "table" | "builtin" | "mnist" | "cifar10"
    title: str
    shape: str  # rows x features after the default preprocessing
    classes: str  # number of classes, or "regression"
    source: str
    licence: str
    citation: str
    variants: dict[str, tuple[FileSpec, ...]] = field(default_factory=dict)
    table: Table | None = None
    notes: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def files(self) -> tuple[FileSpec, ...]:
        return tuple(f for files in self.variants.values() for f in files)

    @property
    def n_rows(self) -> int | None:
        """Rows after the default preprocessing (from ``shape``), or None."""
        match = re.match(r"\s*(\d+)\s*x", self.shape)
        return int(match.group(1)) if match else None

    @property
    def n_features(self) -> int | None:
        """Features per row after the default preprocessing (from ``shape``), or None."""
        match = re.search(r"x\s*(\d+)", self.shape)
        return int(match.group(1)) if match else None

    @property
    def download_bytes(self) -> int:
        return sum(f.size if f.stored is None else f.stored for f in self.files if f.urls)


def _file(raw: dict[str, Any], mirrors: dict[str, str]) -> FileSpec:
    urls = tuple(u.format(**mirrors) for u in raw.get("urls", ()))
    return FileSpec(**{k: v for k, v in raw.items() if k != "variant"} | {"urls": urls})


_TABLE_KEYS = ("columns", "sep", "categorical", "drop", "label", "regression")


def _info(name: str, raw: dict[str, Any], mirrors: dict[str, str]) -> DatasetInfo:
    variants: dict[str, tuple[FileSpec, ...]] = {}
    for f in raw.pop("files", ()):
        key = f.get("variant", "")
        variants[key] = (*variants.get(key, ()), _file(f, mirrors))
    table = {k: raw.pop(k) for k in _TABLE_KEYS if k in raw}
    if raw["kind"] == "table":
        table = {k: tuple(v) if isinstance(v, list) else v for k, v in table.items()}
        table["sep"] = None if table.get("sep") == "whitespace" else table.get("sep", ",")
    return DatasetInfo(
        name=name,
        source=raw.pop("source", UCI_SOURCE),
        licence=raw.pop("licence", UCI_LICENCE),
        aliases=tuple(raw.pop("aliases", ())),
        variants=variants,
        table=Table(**table) if raw["kind"] == "table" else None,
        **raw,
    )


def _read() -> dict[str, DatasetInfo]:
    text = resources.files("rfbench.compute.datasets").joinpath("registry.toml").read_text("utf-8")
    raw = tomllib.loads(text)
    mirrors = raw.pop("mirrors")
    return {name: _info(name, entry, mirrors) for name, entry in raw.items()}


DATASETS: dict[str, DatasetInfo] = _read()
_ALIASES: dict[str, str] = {a: info.name for info in DATASETS.values() for a in info.aliases}


def get(name: str) -> DatasetInfo:
    """The registry row for ``name`` (or an alias); DataError naming the known sets otherwise."""
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in DATASETS:
        raise unknown(name, sorted(DATASETS))
    return DATASETS[key]
