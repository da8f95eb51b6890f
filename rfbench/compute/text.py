"""Plain-text helpers shared by the command line and the experiments (no heavy imports)."""

from __future__ import annotations

import re

#: words a period follows without ending the sentence ("SimRF Fig. 8", "Eq. 7", "e.g. trig")
_ABBREVIATIONS = frozenset(
    "fig figs eq eqs tab thm app sec ref no vs cf al e.g i.e resp approx".split()
)


def first_sentence(text: str) -> str:
    """The first sentence of ``text``: up to the first period that ends a word other than an
    abbreviation such as "Fig." or "e.g."."""
    text = " ".join(text.split())
    for match in re.finditer(r"\.(?=\s|$)", text):
        word = text[: match.start()].rsplit(" ", 1)[-1].lstrip("(").lower()
        if word not in _ABBREVIATIONS:
            return text[: match.end()]
    return text
