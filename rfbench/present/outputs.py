"""The files the presenting commands write (figures, REPORT.md, the site, compare's markdown) and
the ones they never replace: rfbench writes an output file only where nothing is, or over a file
it wrote itself (:func:`written_by_rfbench`, told by the file's own signature), never through a
symbolic link, and a site only into a new or empty folder or one holding a site it wrote.

A refusal is a :class:`~rfbench.compute.checks.UserError` (one line, exit 2) raised before any
file is written.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from rfbench.compute.checks import UserError
from rfbench.compute.results import atomic_write

#: the signature rfbench writes into its PNG (``Software``) and PDF (``Creator``) files
SOFTWARE = "rfbench"
#: signatures of figures rfbench drew before it signed them (matplotlib's own)
LEGACY_FIGURE = ("Matplotlib",)
#: how many bytes of a file are read to tell whether rfbench wrote it
HEAD = 4096
#: the first line of each markdown file rfbench writes (REPORT.md, REPORT-tables.md, compare's)
MARKDOWN_TITLES = ("# rfbench report", "# rfbench compare")
#: what every page of the site has in its head (:func:`rfbench.present.site.html.page`)
HTML_TITLE = " · rfbench</title>"


def _png_signed(path: Path) -> bool:
    from PIL import Image

    try:
        with Image.open(path) as img:
            software = str(img.info.get("Software", ""))
    except Exception:  # noqa: BLE001 - a file PIL cannot read is not a figure rfbench drew
        return False
    return software == SOFTWARE or software.startswith(LEGACY_FIGURE)


def _pdf_signed(path: Path) -> bool:
    data = path.read_bytes()
    if not data.startswith(b"%PDF-"):
        return False
    return any(f"/Creator ({name}".encode() in data for name in (SOFTWARE, *LEGACY_FIGURE))


def _head(path: Path) -> str:
    with open(path, "rb") as fh:
        return fh.read(HEAD).decode("utf-8", errors="replace")


def written_by_rfbench(path: Path) -> bool:
    """Whether the regular file ``path`` is one rfbench wrote, by its kind: a PNG or PDF figure
    signed by rfbench (or drawn by matplotlib before figures were signed), a markdown file
    starting with one of :data:`MARKDOWN_TITLES`, a page of the site."""
    if path.is_symlink() or not path.is_file():
        return False
    suffix = path.suffix.lower()
    try:
        if suffix == ".png":
            return _png_signed(path)
        if suffix == ".pdf":
            return _pdf_signed(path)
        if suffix == ".md":
            return _head(path).startswith(MARKDOWN_TITLES)
        if suffix == ".html":
            return _head(path).startswith("<!DOCTYPE html>") and HTML_TITLE in _head(path)
    except OSError:
        return False
    return False


def _option(option: str) -> str:
    return f"choose another {option} or move it"


def check_folder(folder: Path, option: str = "--out") -> None:
    """Refuse an output folder that is a symbolic link, a file, or lies under a file."""
    if folder.is_symlink():
        raise UserError(
            f"{folder} is a symbolic link; rfbench does not write through links ({_option(option)})"
        )
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder} is a file, not a folder ({_option(option)})")
    parent = next((p for p in folder.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise UserError(f"cannot write {folder}: {parent} is a file, not a folder")


def check_file(
    path: Path, option: str = "--out", ours: Callable[[Path], bool] | None = None
) -> None:
    """Refuse an output file rfbench must not write: a symbolic link, a folder, a path under a
    file, or an existing file rfbench did not write (``ours``, default
    :func:`written_by_rfbench`, tells)."""
    if path.is_symlink():
        raise UserError(
            f"{path} is a symbolic link; rfbench does not write through links ({_option(option)})"
        )
    if path.is_dir():
        raise UserError(f"{option} {path} is a folder; give a file name")
    check_folder(path.parent, option)
    if path.exists() and not (ours or written_by_rfbench)(path):
        raise UserError(
            f"{path} exists and was not written by rfbench; rfbench never replaces it "
            f"({_option(option)})"
        )


def check_markdown(path: Path, option: str = "--out") -> None:
    """Refuse a markdown output whose name does not end in ``.md`` (a report written as
    ``<results>/<experiment>/x.parquet`` made every later command refuse the folder), then
    :func:`check_file` it."""
    if path.is_dir() and not path.is_symlink():
        raise UserError(f"{option} {path} is a folder; give a file name ending in .md")
    if path.suffix.lower() != ".md":
        raise UserError(
            f"invalid value for {option.lstrip('-')!r}: {str(path)!r} "
            "(allowed: a file name ending in .md)"
        )
    check_file(path, option)


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (checked with :func:`check_file` beforehand)."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def copy_file(source: Path, path: Path) -> Path:
    """Copy ``source`` to ``path`` atomically (never through a link at ``path``)."""
    return atomic_write(path, lambda tmp: shutil.copyfile(source, tmp))
