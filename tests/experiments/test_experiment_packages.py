"""One package per experiment, and no experiment imports another (shared helpers live in
rfbench/experiments/{base,chunks,metrics,params,shared}.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import rfbench.experiments

ROOT = Path(rfbench.experiments.__file__).parent
SHARED = {"base", "chunks", "metrics", "params", "shared"}


def test_every_experiment_is_a_package_and_imports_only_its_own_and_the_shared_modules() -> None:
    packages = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())
    assert len(packages) >= 10
    loose = sorted(p.stem for p in ROOT.glob("*.py") if p.stem not in SHARED | {"__init__"})
    assert not loose, f"modules outside an experiment package: {loose}"
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                else:
                    continue
                for name in names if isinstance(node, ast.Import) else names[1:]:
                    parts = name.split(".")
                    if parts[:2] != ["rfbench", "experiments"] or len(parts) < 3:
                        continue
                    other = parts[2] in packages and parts[2] != package
                    assert not other and (parts[2] in SHARED | {package} or len(parts) == 3), (
                        f"{path.relative_to(ROOT)} imports {name}"
                    )
