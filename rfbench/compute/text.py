"""Plain-text helpers shared by the command line, the experiments and the report writers: the
first sentence of a text, Markdown tables and estimator names ``component@weights``, split the same
way everywhere (no rfbench imports: any module may use it, from the estimator library to the
figures)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

#: The coupling of a name without '@' (independent Gaussian projections).
DEFAULT_WEIGHTS = "iid"

#: words a period follows without ending the sentence ("SimRF Fig. 8", "Eq. 7", "e.g. trig")
_ABBREVIATIONS = frozenset(
    "fig figs eq eqs tab thm app sec ref no vs cf al e.g i.e resp approx".split()
)


def first_sentence(text: str, *, clause: bool = False, limit: int | None = None) -> str:
    """The first sentence of ``text``: up to the first period that ends a word other than an
    abbreviation such as "Fig." or "e.g.".

    Parameters
    ----------
    text : str
        Any text; runs of whitespace count as one space.
    clause : bool
        The short form the report quotes: a colon also ends it, the final period or colon is
        dropped, and so is a parenthesis the cut left open.
    limit : int, optional
        At most this many characters, cut with "…".

    Returns
    -------
    str
    """
    text = " ".join(text.split())
    head = text
    for match in re.finditer(r"[.:](?=\s|$)" if clause else r"\.(?=\s|$)", text):
        word = text[: match.start()].rsplit(" ", 1)[-1].lstrip("(").lower()
        if match[0] == ":" or word not in _ABBREVIATIONS:
            head = text[: match.end()]
            break
    if clause:
        head = head.rstrip(".:")
        if head.count("(") > head.count(")"):  # cut inside a parenthesis: drop it
            head = head[: head.rfind("(")].rstrip(" ,;")
    if limit is not None and len(head) > limit:
        head = head[: limit - 1].rstrip() + "…"
    return head


def markdown_cell(text: object) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """The lines of a Markdown table, cells made safe by :func:`markdown_cell`, and a blank line
    after it (``"\\n".join`` gives the table ending in a newline)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def split_name(name: str) -> tuple[str, str | None]:
    """``"trig@orf"`` -> ("trig", "orf"); ``"cluster-hybrid"`` -> ("cluster-hybrid", None)."""
    head, sep, tail = name.partition("@")
    return head, (tail if sep else None)


def weights_of(name: str) -> str:
    """The coupling named after '@', or the default ``"iid"``: ``"cse"`` -> ``"iid"``."""
    return split_name(name)[1] or DEFAULT_WEIGHTS


def family_of(name: str) -> str:
    """The component or hybrid before '@': ``"trig@orf"`` -> ``"trig"``."""
    return split_name(name)[0]
