"""The parameter tables of docs/experiments.md, generated from the experiments' parameter models.

Each built-in experiment has one table — parameter, type, default, bounds or choices, help — between
the markers ``<!-- parameters:NAME -->`` and ``<!-- /parameters -->``. Regenerate them after
changing a model with::

    python -m rfbench.cli.paramdocs            # rewrite docs/experiments.md
    python -m rfbench.cli.paramdocs --check    # exit 1 if the committed tables are stale

(``make docs`` runs the first.) A test fails when the committed tables differ from the models.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rfbench.compute.text import markdown_table

#: docs/experiments.md of this checkout
PAGE = Path(__file__).resolve().parents[2] / "docs" / "experiments.md"
#: the command that rewrites the tables (for failure messages)
COMMAND = "python -m rfbench.cli.paramdocs"
_BLOCK = re.compile(r"(<!-- parameters:([a-z0-9_-]+) -->\n)(.*?)(<!-- /parameters -->)", re.S)

__all__ = ["COMMAND", "PAGE", "main", "render", "table"]


def _value(value: Any) -> str:
    """A default as TOML writes it: ``128``, ``1.0``, ``true``, ``"softmax"``, ``["a", "b"]``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(map(_value, value)) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def table(name: str) -> str:
    """The Markdown table of experiment ``name``'s parameters."""
    from rfbench.compute.experiments import get_experiment

    header = ["parameter", "type", "default", "bounds / choices", "help"]
    rows = [(f"`{p.key}`", p.type_name, f"`{_value(p.default)}`", p.constraint, p.help)
            for p in get_experiment(name).parameters().values()]  # fmt: skip
    return "\n".join(markdown_table(header, rows))


def render(text: str) -> str:
    """``text`` with every marked table regenerated from the models."""
    return _BLOCK.sub(lambda m: m[1] + table(m[2]) + m[4], text)


def main(argv: list[str] | None = None) -> int:
    """Rewrite the tables of docs/experiments.md, or with ``--check`` say whether they are stale."""
    parser = argparse.ArgumentParser(prog="python -m rfbench.cli.paramdocs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if stale")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page (docs/experiments.md)")
    args = parser.parse_args(argv)
    text = args.page.read_text(encoding="utf-8")
    new = render(text)
    if new == text:
        return 0
    if args.check:
        print(f"{args.page}: parameter tables are stale; run {COMMAND}", file=sys.stderr)
        return 1
    args.page.write_text(new, encoding="utf-8")
    print(f"{args.page}: parameter tables rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
