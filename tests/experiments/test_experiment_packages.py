"""One package per experiment (shared helpers live in
rfbench/compute/experiments/{base,chunks,metrics,params,shared}.py, the registry in its
__init__.py); that no experiment imports another is an import contract in pyproject.toml."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import rfbench.compute.experiments

ROOT = Path(rfbench.compute.experiments.__file__).parent
SHARED = {"base", "chunks", "metrics", "params", "shared"}


def test_every_experiment_is_a_package_named_in_the_independence_contract() -> None:
    """No loose modules beside the shared ones; every package is one of the modules of the import
    contract "no experiment imports another" (pyproject.toml, checked by lint-imports in
    ``make test``), so a new experiment is held to it too."""
    packages = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())
    assert len(packages) >= 10
    loose = sorted(p.stem for p in ROOT.glob("*.py") if p.stem not in SHARED | {"__init__"})
    assert not loose, f"modules outside an experiment package: {loose}"
    pyproject = tomllib.loads((ROOT.parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = pyproject["tool"]["importlinter"]["contracts"]
    (independent,) = [c for c in contracts if c["type"] == "independence"]
    named = sorted(m.rsplit(".", 1)[-1] for m in independent["modules"])
    assert named == packages


# ---------------------------------------------------------------- no dispatch on estimator names
#
# What an experiment needs to know about an estimator is asked of the estimator (its capabilities,
# docs/extending.md#capabilities) or of ``registry.describe(name)``, never read off its name: a
# plugin estimator must work (or be skipped with a reason) without an experiment knowing it. So no
# module under rfbench/compute/experiments holds a registered component, coupling, hybrid or alias
# name as a string (``"trig"``, ``"iid"``, ``"positive@orf"``, the f-string piece ``"positive@"``)
# outside docstrings and the parameter declarations — an experiment's ``params.py`` module or its
# ``ExperimentParams`` model wherever it is (outside its validator functions) and the ``profiles``
# attribute: the papers' estimators are data there — and none tests an estimator's class
# (``isinstance(est, ComponentEstimator)``).

#: module -> {name literal: why it is data, not dispatch}. These replay a paper's own closed list
#: (its figure's estimators, the released code's methods, the paper's table columns); shrink it,
#: never grow it for dispatch — a stale entry fails the test too.
PAPER_DATA: dict[str, dict[str, str]] = {
    "classify/simrf_replay.py": dict.fromkeys(
        [
            "positive@iid",
            "positive@orf",
            "positive@simrf",
            "positive@simrf-plus",
            "positive@orf-fast",
            "positive@simrf-fast",
            "simrf",
        ],
        "the SimRF authors' released script's four methods and its split protocol 'simrf'",
    ),  # fmt: skip
    "clusters/experiment.py": dict.fromkeys(
        ["cluster-hybrid", "positive@iid", "trig@iid", "iid"],
        "HRF Table 3's three estimators and their closed forms (the hybrid's blocks are SM⁺)",
    ),
    "clusters/legacy_ortho.py": dict.fromkeys(
        ["cluster-hybrid", "positive@iid", "trig@iid"],
        "replay of the HRF notebook's three projection streams",
    ),
    "theory/experiment.py": dict.fromkeys(
        ["iid", "orf", "simrf", "simrf-plus", "positive@"],
        "SimRF Figs. 4-6: closed-form curves of positive features per coupling",
    ),
    "variance/experiment.py": dict.fromkeys(
        ["@iid"],
        "DERF Figs. 1-2: the paper's mechanisms of the closed-form variance (iid)",
    ),
    "variance/derf_mc.py": dict.fromkeys(
        ["trig", "trig@iid", "trig-phase@iid", "@iid"],
        "DERF Figs. 1-2: the random-phase TrigRF of the paper is not a registry estimator",
    ),
}
DECLARATIONS = {"profiles"}


def _registered() -> tuple[set[str], set[str]]:
    """(heads: components, hybrids and aliases; couplings), from the registry itself."""
    from rfbench.compute.features import registry
    from rfbench.compute.text import split_name

    heads = {split_name(n)[0] for n in registry.estimator_names()}
    return heads, set(registry.weights_samplers())


def _is_name(text: str, heads: set[str], couplings: set[str]) -> bool:
    head, at, weights = text.partition("@")
    if not at:
        return text in heads | couplings
    return bool(head or weights) and head in heads | {""} and weights in couplings | {""}


def name_literals(source: str, declarations: bool = False) -> list[tuple[int, str]]:
    """(line, literal) of every registered estimator name held as a string in ``source`` outside
    docstrings, the ``profiles`` class attribute and an ``ExperimentParams`` model's declarations;
    with ``declarations`` (a ``params.py`` module), outside everything but its functions."""
    heads, couplings = _registered()
    tree = ast.parse(source)
    exempt: set[int] = set()
    code = {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for sub in ast.walk(node)
    }
    models = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "ExperimentParams" for b in node.bases)
    ]
    for scope in [tree] if declarations else models:
        exempt.update(id(sub) for sub in ast.walk(scope) if id(sub) not in code)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                exempt.add(id(first.value))
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                targets = (
                    stmt.targets
                    if isinstance(stmt, ast.Assign)
                    else [getattr(stmt, "target", None)]
                )
                if any(isinstance(t, ast.Name) and t.id in DECLARATIONS for t in targets):
                    exempt.update(id(sub) for sub in ast.walk(stmt))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in exempt
        and _is_name(node.value, heads, couplings)
    ]


def class_tests(source: str) -> list[tuple[int, str]]:
    """(line, class) of every ``isinstance``/``issubclass`` against an estimator, component or
    coupling class imported from rfbench.compute.features (dispatch on what an estimator *is*)."""
    import importlib

    from rfbench.compute.features.base import Component, Estimator, WeightsSampler

    tree = ast.parse(source)
    imported: dict[str, type] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "rfbench.compute.features"
        ):
            module = importlib.import_module(node.module)
            for alias in node.names:
                obj = getattr(module, alias.name, None)
                if isinstance(obj, type) and issubclass(
                    obj, Estimator | Component | WeightsSampler
                ):
                    imported[alias.asname or alias.name] = obj
    found = []
    for node in ast.walk(tree):
        call = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        if call and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            for sub in ast.walk(node.args[1]):
                if isinstance(sub, ast.Name) and sub.id in imported:
                    found.append((node.lineno, sub.id))
    return found


def test_no_experiment_dispatches_on_estimator_names_or_classes() -> None:
    unused = {module: set(names) for module, names in PAPER_DATA.items()}
    problems = []
    for path in sorted(ROOT.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        allowed = PAPER_DATA.get(module, {})
        for line, text in name_literals(source, declarations=path.name == "params.py"):
            if text in allowed:
                unused[module].discard(text)
            else:
                problems.append(f"{module}:{line}: estimator name {text!r}")
        problems += [
            f"{module}:{line}: isinstance(..., {cls})" for line, cls in class_tests(source)
        ]
    assert not problems, "ask the estimator or registry.describe instead:\n" + "\n".join(problems)
    stale = {module: sorted(names) for module, names in unused.items() if names}
    assert not stale, f"PAPER_DATA entries no longer needed (remove them): {stale}"


def test_the_name_dispatch_check_catches_the_old_precision_maps() -> None:
    """The shape of rfbench/compute/experiments/precision/maps.py before the capability (name lists
    and
    class tests), in miniature: both checks must flag it."""
    old = '''
from rfbench.compute.features.estimator import ComponentEstimator
from rfbench.compute.features.hybrid import AngularHybrid

SIMPLE = ("trig", "positive", "hyperbolic")
DERF = ("gerf", "aderf", "sderf", "saderf")


def supported(est):
    """Docstrings may say trig."""
    if isinstance(est, AngularHybrid):
        return True
    return isinstance(est, ComponentEstimator) and est.component.name in SIMPLE + DERF


def _simple(name, u, c):
    if name == "positive":
        return u
    return (f"{name}@iid", f"positive@{c}")


class Fine:
    profiles = {"quick": {"components": ["trig", "positive@orf"]}}


class Params(ExperimentParams):
    estimators: list[str] = ["trig@orf"]

    def check(self):
        return "hyperbolic@orf"
'''
    literals = {text for _, text in name_literals(old)}
    assert literals == {
        "trig", "positive", "hyperbolic", "gerf", "aderf", "sderf", "saderf", "@iid", "positive@",
        "hyperbolic@orf",
    }  # fmt: skip
    assert {cls for _, cls in class_tests(old)} == {"AngularHybrid", "ComponentEstimator"}
