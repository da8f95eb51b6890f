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
