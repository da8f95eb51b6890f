"""The README's library snippet ("The estimator library") runs as written, is light, and checks
itself: its Monte Carlo MSE agrees with the closed form against the exact kernel."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[2] / "README.md"
#: all the arrays the snippet leaves behind, together: a reader runs it in a blink (the first
#: version held 2.6 GB of draws for a 10 × 10 estimate)
LIGHT_BYTES = 50_000_000


def section_blocks(heading: str, language: str = "python") -> list[str]:
    """The ```language blocks of the README section ``## heading``."""
    text = README.read_text(encoding="utf-8")
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, f"README has no section {heading!r}"
    return re.findall(rf"```{language}\n(.*?)```", section[1], re.S)


def test_the_library_snippet_runs_and_checks_itself_against_the_exact_kernel(capsys) -> None:
    (code,) = section_blocks("The estimator library")
    assert "softmax_kernel" in code and "theory.mse" in code and "assert" in code
    namespace: dict = {}
    exec(compile(code, "README.md", "exec", dont_inherit=True), namespace)  # its asserts hold
    assert "Monte Carlo MSE / closed form" in capsys.readouterr().out
    arrays = [v for v in namespace.values() if isinstance(v, np.ndarray)]
    assert sum(a.nbytes for a in arrays) < LIGHT_BYTES
    assert namespace["K_hat"].shape[1:] == namespace["K"].shape == (10, 10)
