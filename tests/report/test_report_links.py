"""REPORT.md names only what a clone of the repository has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_report_links_nothing_a_clone_lacks(committed_markdown: tuple[str, str]) -> None:
    text = " ".join(committed_markdown)
    assert "seeds/" not in text and "../shared" not in text
    for link in re.findall(r"`(docs/[\w./-]+)(?:#[\w-]+)?`", text):
        assert (ROOT / link).is_file(), link


def test_figure_links_survive_spaces_and_parentheses_in_folder_names(tmp_path: Path) -> None:
    """``[hrf-fig1](../my figs (1)/hrf-fig1.png)`` ended the link at the space: it is
    percent-encoded, and reads back to the drawn file."""
    import shutil
    from urllib.parse import unquote

    from rfbench.present.report.build import write_report

    results = tmp_path / "results"
    (results / "theory").mkdir(parents=True)
    shutil.copyfile(ROOT / "results/theory/hrf-fig1.parquet", results / "theory/hrf-fig1.parquet")
    figures = tmp_path / "my figs (1)#"
    figures.mkdir()
    shutil.copyfile(ROOT / "results/figures/hrf-fig1.png", figures / "hrf-fig1.png")
    path, _ = write_report(results, results / "REPORT.md", figures)
    targets = re.findall(r"\[hrf-fig1\]\(([^)\s]+)\)", path.read_text())
    assert targets, "no link to the drawn figure"
    assert all((path.parent / unquote(t)).resolve() == figures / "hrf-fig1.png" for t in targets)
