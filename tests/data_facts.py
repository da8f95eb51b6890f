"""What the loaders must find in this session's data folder: the real files (their published
shapes and class counts, from each data set's documentation) or the synthetic fixtures
(tests/fixtures/make_data.py). Independent checks parse the raw text themselves."""

from __future__ import annotations

import os
from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"
#: the worked plugin package (examples/rfbench-example-plugin)
EXAMPLE_PLUGIN = Path(__file__).resolve().parents[1] / "examples" / "rfbench-example-plugin"


def _find_real_data() -> Path | None:
    if os.environ.get("RFBENCH_TEST_DATA") == "fixtures":
        return None
    path = Path(os.environ.get("RFBENCH_DATA", SHARED_DATA))
    return path if path.is_dir() else None


_REAL_DATA = _find_real_data()  # decided once, before any test points RFBENCH_DATA elsewhere


def real_data() -> Path | None:
    """The real data folder, or None (absent, or ``RFBENCH_TEST_DATA=fixtures``)."""
    return _REAL_DATA


def uses_fixtures() -> bool:
    return real_data() is None


# name: (rows, features after encoding, classes); real: the SimRF paper's table of data sets
REAL_SHAPES = {
    "abalone": (4177, 10, 28), "banknote": (1372, 4, 2), "car": (1728, 21, 4),
    "yeast": (1484, 8, 10), "cmc": (1473, 9, 3), "nursery": (12960, 27, 5), "wifi": (2000, 7, 4),
    "chess": (28056, 40, 18), "letter": (20000, 16, 26), "boston": (506, 13, 0),
}  # fmt: skip
FIXTURE_SHAPES = {
    "abalone": (160, 10, 5), "banknote": (200, 4, 2), "car": (160, 21, 4), "yeast": (180, 8, 4),
    "cmc": (180, 9, 3), "nursery": (200, 19, 3), "wifi": (200, 7, 4), "chess": (200, 20, 3),
    "letter": (160, 16, 5), "boston": (120, 13, 0),
}  # fmt: skip
# image sets: (mnist test rows, cifar10 sample train rows, cifar10 sample test rows)
REAL_IMAGES = (10000, 200, 20)
FIXTURE_IMAGES = (60, 40, 10)


def shapes() -> dict[str, tuple[int, int, int]]:
    return FIXTURE_SHAPES if uses_fixtures() else REAL_SHAPES


def images() -> tuple[int, int, int]:
    return FIXTURE_IMAGES if uses_fixtures() else REAL_IMAGES


def raw_rows(path: Path, sep: str | None = ",") -> list[list[str]]:
    """The non-blank lines of a text table, split on ``sep`` (None: whitespace)."""
    text = path.read_text()
    return [line.strip().split(sep) for line in text.splitlines() if line.strip()]
