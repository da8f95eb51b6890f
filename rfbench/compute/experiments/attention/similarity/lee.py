"""The Lee et al. (2005) document-similarity set, read from the installed ``gensim`` wheel.

docs/experiments.md#similarity. Lee, Pincombe and Welsh (2005), "An empirical evaluation of
models of text document similarity" (Proc. CogSci 27): 50 short news documents and, for each of
the 1,225 pairs, the mean similarity rating of human judges (scaled to [0, 1]). gensim ships both
as test data (``gensim/test/test_data/lee.cor``, one latin-1 document per line, and
``similarities0-1.txt``, the 50 × 50 matrix whose upper triangle holds the pair scores). rfbench
never imports gensim and never copies the files: it finds them among the installed distribution's
files (:mod:`importlib.metadata`) and checks each against its sha256 before reading it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rfbench.compute.datasets.errors import DataError, DataUnavailable

#: the distribution, its pinned version and the one command that installs it
DISTRIBUTION, VERSION = "gensim", "4.4.0"
INSTALL = f"pip install --no-deps {DISTRIBUTION}=={VERSION}"
#: what results call the data set
NAME = "lee-2005"
DOCUMENTS, SCORES = "lee.cor", "similarities0-1.txt"
FOLDER = "gensim/test/test_data"
#: sha256 of each file as gensim 4.4.0 ships it (its RECORD agrees)
SHA256 = {
    DOCUMENTS: "a878f9a58f6743c32985c56c2f2f75988386216b38a4023a01fd3bcf7884d93e",
    SCORES: "23762bc6b728897144dda3d324a2c032dc1e059e1009806226d64b6dd123ed79",
}


@dataclass(frozen=True)
class LeeSet:
    """The documents and their human similarity scores.

    Attributes
    ----------
    documents : tuple of str, length n
    human : ndarray, shape (n, n)
        Symmetric; entry (i, j), i ≠ j, the mean human rating of the pair; the diagonal 1.
    """

    documents: tuple[str, ...]
    human: np.ndarray

    @property
    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(i, j) of every pair i < j: two int arrays of length n(n − 1)/2."""
        return np.triu_indices(len(self.documents), 1)


def _missing() -> DataUnavailable:
    return DataUnavailable(
        f"data set {NAME!r}: the {DISTRIBUTION} {VERSION} wheel that carries it is not installed; "
        f"fix: run `{INSTALL}`",
        NAME,
        INSTALL,
    )


def locate() -> dict[str, Path]:
    """The two files in the installed gensim distribution (file name -> path).

    Raises
    ------
    DataUnavailable
        gensim is not installed, or its files do not list both (one line naming
        :data:`INSTALL`).
    """
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise _missing() from None
    wanted = {f"{FOLDER}/{name}": name for name in SHA256}
    found = {
        wanted[str(f)]: Path(dist.locate_file(f)) for f in dist.files or [] if str(f) in wanted
    }
    if len(found) < len(SHA256) or not all(p.is_file() for p in found.values()):
        raise _missing()
    return found


def _checked(path: Path, name: str) -> bytes:
    """The bytes of ``path``, which must hash to SHA256[name] (else one DataError line)."""
    data = path.read_bytes()
    got = hashlib.sha256(data).hexdigest()
    if got != SHA256[name]:
        raise DataError(
            f"data set {NAME!r}: {path} failed verification (sha256 {got[:16]}…, expected "
            f"{SHA256[name][:16]}…, as {DISTRIBUTION} {VERSION} ships it); fix: run "
            f"`{INSTALL} --force-reinstall`"
        )
    return data


def parse(documents: bytes, scores: bytes) -> LeeSet:
    """The set from the two files' bytes (module doc): one latin-1 document per line; a square
    matrix of scores whose upper triangle holds the pairs (the lower triangle is ignored).

    Raises
    ------
    DataError
        Not one document per matrix row, or a malformed matrix.
    """
    docs = tuple(line.strip() for line in documents.decode("latin-1").splitlines() if line.strip())
    try:
        matrix = np.array(
            [
                [float(x) for x in line.split()]
                for line in scores.decode("ascii").splitlines()
                if line.strip()
            ]  # fmt: skip
        )
    except ValueError as exc:
        raise DataError(f"data set {NAME!r}: {SCORES} is not a matrix of numbers ({exc})") from None
    n = len(docs)
    if matrix.shape != (n, n) or n < 3:
        raise DataError(
            f"data set {NAME!r}: {SCORES} has shape {matrix.shape}, expected ({n}, {n}) for the "
            f"{n} documents of {DOCUMENTS} (at least 3)"
        )
    upper = np.triu(matrix, 1)
    human = upper + upper.T + np.eye(n)
    if not np.isfinite(human).all():
        raise DataError(f"data set {NAME!r}: {SCORES} holds non-finite scores")
    return LeeSet(docs, human)


def read(paths: dict[str, Path] | None = None) -> LeeSet:
    """The set, from ``paths`` (file name -> path; default :func:`locate`), each file checked
    against its pinned sha256 before it is parsed."""
    paths = paths if paths is not None else locate()
    return parse(*(_checked(paths[name], name) for name in (DOCUMENTS, SCORES)))


@functools.lru_cache(maxsize=1)
def load() -> LeeSet:
    """:func:`read` of the installed files, once per process."""
    return read()
