"""The Layout of README.md and of docs/architecture.md is the code's: every package folder is
there, every path named exists, and the README's experiments are the registered ones."""

from __future__ import annotations

import re
from pathlib import Path

from rfbench.compute.experiments import list_experiments

ROOT = Path(__file__).resolve().parents[2]


def readme_layout() -> str:
    """The code block of README.md's ``## Layout``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Layout\n+```\n(.*?)```", text, re.S | re.M)
    assert block, "README.md has no Layout block"
    return block[1]


def architecture_layout() -> str:
    """The table of docs/architecture.md's ``## Layout``."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = re.search(r"^## Layout\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "docs/architecture.md has no Layout section"
    return section[1]


def packages() -> list[str]:
    """rfbench's package folders, as ``rfbench/<name>/`` and, inside the layer folders,
    ``rfbench/<layer>/<name>/``."""
    found = [*(ROOT / "rfbench").glob("*/__init__.py"), *(ROOT / "rfbench").glob("*/*/__init__.py")]
    return sorted(f"{p.parent.relative_to(ROOT).as_posix()}/" for p in found)


def test_readme_layout_lists_the_registered_experiments() -> None:
    layout = readme_layout()
    entry = re.search(r"^rfbench/compute/experiments/ .*?:(.*?)(?=^\S)", layout, re.S | re.M)
    assert entry, "the Layout's rfbench/compute/experiments/ line names no experiments"
    listed = [name.strip() for name in entry[1].split(",")]
    built_in = sorted(e.name for e in list_experiments() if e.__module__.startswith("rfbench."))
    assert sorted(listed) == built_in
    assert len(listed) == len(set(listed))


def test_both_layouts_name_every_package_folder() -> None:
    assert len(packages()) >= 10  # the scan itself works
    for where, layout in (
        ("README.md", readme_layout()),
        ("architecture.md", architecture_layout()),
    ):
        missing = [p for p in packages() if p not in layout]
        assert not missing, f"{where} Layout omits {missing}"


def test_every_path_a_layout_names_exists() -> None:
    readme = re.findall(r"^([\w./-]+/)\s", readme_layout(), re.M)
    first_cells = re.findall(r"^\| (.+?) \|", architecture_layout(), re.M)
    table = [p for cell in first_cells for p in re.findall(r"`([\w./-]+)`", cell)]
    assert len(readme) >= 15 and len(table) >= 15  # the scans themselves work
    missing = [p for p in readme + table if not (ROOT / p).exists()]
    assert not missing, f"the Layout names paths that do not exist: {missing}"
