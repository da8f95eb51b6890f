"""One-line data errors (docs/architecture.md#cli): name the data set, the path, what was expected,
and the fix."""

from __future__ import annotations

from pathlib import Path

from rfbench.errors import UserError


class DataError(UserError):
    """A data set cannot be used: unknown, missing, corrupt or unreadable; a one-line message."""


class DataUnavailable(DataError):
    """A data set's file (or a model) is not here and could not be downloaded (offline, say);
    ``fix`` is the one command that gets it."""

    def __init__(self, message: str, dataset: str, fix: str = "") -> None:
        super().__init__(message)
        self.dataset = dataset
        self.fix = fix or f"rfbench data fetch {dataset}"

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:  # crosses process boundaries
        return type(self), (str(self), self.dataset, self.fix)


def fix_hint(name: str, rel: str | None = None) -> str:
    """The standard remedy, naming the command and the environment variable."""
    where = f" that holds {rel}" if rel else ""
    return f"fix: run `rfbench data fetch {name}`, or set RFBENCH_DATA to a folder{where}"


def unknown(name: str, known: list[str]) -> DataError:
    return DataError(f"unknown data set {name!r}; known data sets: {', '.join(known)}")


def missing(name: str, path: Path, rel: str, why: str = "") -> DataError:
    reason = f" ({why})" if why else ""
    return DataUnavailable(
        f"data set {name!r}: file {path} is missing{reason}; expected the file {rel} "
        f"under the data folder; {fix_hint(name, rel)}",
        name,
    )


def mismatch(
    name: str, path: Path, got: str, nbytes: int, want: str, want_bytes: int | None, what: str = ""
) -> DataError:
    content = f"{what} " if what else ""
    size = f", {want_bytes:,} bytes" if want_bytes is not None else ""
    return DataError(
        f"data set {name!r}: {path} failed verification ({content}sha256 {got[:16]}…, "
        f"{nbytes:,} bytes; expected sha256 {want[:16]}…{size}): the file is corrupt or "
        f"truncated and was not used; fix: run `rfbench data fetch {name}` to download a fresh "
        "copy, or set RFBENCH_DATA to a folder with a good copy"
    )


def unreadable(name: str, path: Path, expected: str, why: str) -> DataError:
    why = " ".join(str(why).split()) or "unknown error"
    return DataError(
        f"data set {name!r}: cannot read {path} ({why}); expected {expected}; {fix_hint(name)}"
    )
