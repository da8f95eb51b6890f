"""Every list of experiments in docs/architecture.md — the command line's subcommands and the
``experiment`` column of the result schema — names exactly the registered built-in experiments."""

from __future__ import annotations

import re
from pathlib import Path

from rfbench.compute.experiments import list_experiments

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def built_in() -> list[str]:
    return sorted(e.name for e in list_experiments() if e.__module__.startswith("rfbench."))


def test_the_command_line_section_lists_every_experiment() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = re.search(r"^## The command line\n+```\n(.*?)\[options\]", text, re.S | re.M)
    assert block, "docs/architecture.md has no command-line block ending in [options]"
    listed = re.findall(r"[\w-]+", block[1].replace("rfbench", "", 1))
    assert sorted(listed) == built_in(), "the subcommands listed are not the registered ones"


def test_the_result_schema_lists_every_experiment() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    row = re.search(r"^\| `experiment` \| string \| (.*?) \|$", text, re.M)
    assert row, "docs/architecture.md's result schema has no `experiment` row"
    assert sorted(re.findall(r"`([\w-]+)`", row[1])) == built_in()
