"""One public surface (issue 43): ``rfbench.api`` holds what a plugin or a library user imports,
the documented examples and the example plugin import nothing else from rfbench, and the
computing layer names no layer above it, not even in a string."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from data_facts import EXAMPLE_PLUGIN

import rfbench.api

ROOT = Path(__file__).resolve().parents[1]
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _sources() -> dict[str, str]:
    """Every example a plugin author or library user copies: the example plugin's modules and
    the ```python blocks of docs/extending.md and README.md."""
    found = {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for path in sorted((EXAMPLE_PLUGIN / "rfbench_example_plugin").glob("*.py"))
    }
    for page in ("docs/extending.md", "README.md"):
        blocks = PYTHON_BLOCK.findall((ROOT / page).read_text(encoding="utf-8"))
        found |= {f"{page} block {i + 1}": code for i, code in enumerate(blocks)}
    return found


def _rfbench_modules(code: str) -> list[str]:
    """The rfbench modules ``code`` imports (``import`` and ``from ... import``, at any depth)."""
    named = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            named.append(node.module)
    return [m for m in named if m == "rfbench" or m.startswith("rfbench.")]


def test_the_examples_import_only_the_public_module() -> None:
    sources = _sources()
    assert len(sources) >= 8 and "README.md block 1" in sources  # the scan itself works
    private = {
        where: modules
        for where, code in sources.items()
        if (modules := [m for m in _rfbench_modules(code) if m != "rfbench.api"])
    }
    assert not private, f"import from rfbench.api only: {private}"
    assert _rfbench_modules("import rfbench.compute.kernels\nfrom rfbench import api\n") == [
        "rfbench.compute.kernels",
        "rfbench",
    ]


@pytest.mark.parametrize("name", rfbench.api.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(rfbench.api, name) is not None
    assert name in dir(rfbench.api)


def test_the_public_names_are_listed_once_and_nothing_else_resolves() -> None:
    assert len(rfbench.api.__all__) == len(set(rfbench.api.__all__))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        rfbench.api.Nope  # noqa: B018


def test_no_computing_module_names_the_presentation() -> None:
    """The plugin loader once imported the figure registry by a string: a computing →
    presentation dependency no import contract could see. Registries now announce themselves."""
    compute = ROOT / "rfbench" / "compute"
    files = [p for p in compute.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert len(files) > 100
    naming = [str(p.relative_to(ROOT)) for p in files if b"rfbench.present" in p.read_bytes()]
    assert not naming
