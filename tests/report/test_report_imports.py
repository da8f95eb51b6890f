"""The report package has no import cycles (issue 16): every import between its modules,
at module level or inside a function (but not under ``TYPE_CHECKING``), points one way."""

from __future__ import annotations

import ast
from pathlib import Path

import rfbench.report

PACKAGE = Path(rfbench.report.__file__).resolve().parent
NAME = "rfbench.report"


def _module(path: Path) -> str:
    return NAME if path.stem == "__init__" else f"{NAME}.{path.stem}"


def _imports(path: Path, modules: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        for sub in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found |= {n for n in names if n in modules}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
    return found - {_module(path)}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (empty if none), by depth-first search."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return [*stack[stack.index(d) :], d]
            if d not in state and (found := visit(d)):
                return found
        stack.pop()
        state[m] = 2
        return []

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return []


def test_no_import_cycles_in_the_report_package() -> None:
    files = sorted(PACKAGE.glob("*.py"))
    modules = {_module(p) for p in files}
    # a submodule importing the package itself (``from rfbench.report import X``) is a cycle
    graph = {_module(p): _imports(p, modules) for p in files}
    assert _cycle(graph) == []


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
