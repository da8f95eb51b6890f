"""Real English text for the attention experiment, not written by the project.

The three files here are verbatim copies of licence texts published by the Free Software
Foundation, as shipped by Debian's ``base-files`` package in ``/usr/share/common-licenses/``:

- ``GPL-3.txt``: GNU General Public License, version 3 (29 June 2007);
- ``GPL-2.txt``: GNU General Public License, version 2 (June 1991);
- ``GFDL-1.3.txt``: GNU Free Documentation License, version 1.3 (3 November 2008).

Each says "Everyone is permitted to copy and distribute verbatim copies of this license document,
but changing it is not allowed": they are kept unchanged, and their sha256 is pinned below.
"""

from __future__ import annotations

import functools
import hashlib
import re
from importlib import resources

#: file name -> sha256 of the verbatim copy
TEXTS = {
    "GPL-3": "3972dc9744f6499f0f9b2dbf76696f2ae7ad8af9b23dde66d6af86c9dfb36986",
    "GPL-2": "8177f97513213526df2cf6184d8ff986c675afb514d4e68a404010521b880643",
    "GFDL-1.3": "110535522396708cea37c72a802c5e7e81391139f5f7985631c93ef242b206a4",
}
SOURCE = "FSF licence texts (GPL-3, GPL-2, GFDL-1.3), verbatim copies as distributed"


@functools.cache
def text(name: str = "GPL-3") -> str:
    """The whole text of one file, whitespace collapsed to single spaces (sha256-checked)."""
    raw = resources.files("rfbench.compute.models.texts").joinpath(f"{name}.txt").read_bytes()
    got = hashlib.sha256(raw).hexdigest()
    if got != TEXTS[name]:
        raise RuntimeError(f"text {name}: sha256 {got[:16]}… differs from the pinned copy")
    return " ".join(raw.decode().split())


@functools.cache
def sentences(min_words: int = 6, max_words: int = 40) -> tuple[str, ...]:
    """Every sentence (split at . ! ? ;) of the three texts with min_words..max_words words,
    distinct, in file order (GPL-3, GPL-2, GFDL-1.3): 307 with the defaults."""
    out: dict[str, None] = {}
    for name in TEXTS:
        for s in re.split(r"(?<=[.!?;])\s+", text(name)):
            if min_words <= len(s.split()) <= max_words:
                out.setdefault(s, None)
    return tuple(out)
