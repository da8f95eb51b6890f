"""Real English text for the attention experiment, not written by the project.

The three files here are verbatim copies of licence texts published by the Free Software
Foundation, as shipped by Debian's ``base-files`` package in ``/usr/share/common-licenses/``:

- ``GPL-3.txt``: GNU General Public License, version 3 (29 June 2007);
- ``GPL-2.txt``: GNU General Public License, version 2 (June 1991);
- ``GFDL-1.3.txt``: GNU Free Documentation License, version 1.3 (3 November 2008).

Each says "Everyone is permitted to copy and distribute verbatim copies of this license document,
but changing it is not allowed": they are kept unchanged, and their sha256 is pinned below.
"""

from rfbench.compute.models.texts.reader import SOURCE, TEXTS, sentences, text

__all__ = ["SOURCE", "TEXTS", "sentences", "text"]
