"""The repository's docs are self-contained: every ``docs/<page>.md#anchor`` cited by the code,
configs, tests or the docs themselves exists, and nothing cites notes outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SOURCES = ("rfbench", "configs", "tests", "benchmarks", "docs")
SUFFIXES = (".py", ".toml", ".md")

#: 'docs/methods.md#trig', optionally followed by ', #positive, #hybrids' (same page)
CITATION = re.compile(r"docs/([a-z-]+)\.md#([a-z0-9-]+)((?:,\s*#[a-z0-9-]+)*)")
#: Markdown links inside docs/: '(methods.md#trig)', '(#notation)'
LINK = re.compile(r"\]\((?:([a-z-]+)\.md)?#([a-z0-9-]+)\)")
#: Citations of files a clone does not have (built so this file does not match itself).
OUTSIDE = re.compile("spec" + r"/\s*[a-z-]+\.md|DESIGN" + r"\s+§")


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: str) -> set[str]:
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    found = set(re.findall(r'<a id="([^"]+)"></a>', text))
    found |= {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    return found


def source_files() -> list[Path]:
    files = [ROOT / "README.md"]
    for top in SOURCES:
        files += [p for p in sorted((ROOT / top).rglob("*")) if p.suffix in SUFFIXES]
    return [p for p in files if p.is_file() and "__pycache__" not in p.parts]


def cited() -> list[tuple[str, str, str]]:
    """(where, page, anchor) for every docs citation and docs-internal link."""
    out = []
    for path in source_files():
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(ROOT))
        for m in CITATION.finditer(text):
            for anchor in [m[2], *re.findall(r"#([a-z0-9-]+)", m[3])]:
                out.append((rel, m[1], anchor))
        if path.parent == DOCS:
            for m in LINK.finditer(text):
                out.append((rel, m[1] or path.stem, m[2]))
    return out


def test_docs_pages_exist():
    for page in ("methods", "experiments", "architecture", "extending"):
        assert (DOCS / f"{page}.md").is_file(), page


def test_every_cited_anchor_exists():
    citations = cited()
    assert len(citations) > 100  # the code does cite the docs: the scan itself works
    known = {page: anchors(page) for page in {p for _, p, _ in citations}}
    missing = sorted({f"{where}: docs/{page}.md#{a}" for where, page, a in citations
                      if a not in known[page]})  # fmt: skip
    assert not missing, "dangling docs anchors:\n" + "\n".join(missing)


def test_anchors_are_unique():
    for page in ("methods", "experiments", "architecture", "extending"):
        ids = re.findall(r'<a id="([^"]+)"></a>', (DOCS / f"{page}.md").read_text())
        duplicates = sorted({a for a in ids if ids.count(a) > 1})
        assert not duplicates, f"{page}.md repeats anchors {duplicates}"


@pytest.mark.parametrize("path", source_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_citations_outside_the_repository(path: Path):
    bad = [
        f"{n}: {line.strip()}"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not bad, "cite the paper or docs/ instead:\n" + "\n".join(bad)


def test_parameter_tables_are_generated_from_the_models():
    from rfbench.cli.paramdocs import COMMAND, PAGE, render
    from rfbench.compute.experiments import list_experiments

    text = PAGE.read_text(encoding="utf-8")
    for exp in list_experiments():
        if type(exp).__module__.startswith("rfbench."):
            assert f"<!-- parameters:{exp.name} -->" in text, f"{exp.name}: no table ({COMMAND})"
    assert render(text) == text, f"docs/experiments.md: stale parameter tables; run {COMMAND}"


def test_the_readme_set_up_line_installs_what_the_makefile_installs() -> None:
    """Issue 39: the README said ``pip install -e '.[dev]'`` where ``make`` installs more."""

    root = Path(__file__).resolve().parents[2]
    makefile = (root / "Makefile").read_text(encoding="utf-8")
    (extras,) = re.findall(r"pip install --quiet -e '\.\[([^\]]*)\]'", makefile)
    assert f"pip install -e '.[{extras}]'" in (root / "README.md").read_text(encoding="utf-8")
