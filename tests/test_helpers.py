"""The shared helpers written once: standard error (rfbench.compute.stats), first sentence and
Markdown tables (rfbench.compute.text)."""

from __future__ import annotations

import numpy as np
import scipy.stats

from rfbench.compute.stats import mean_se, standard_error
from rfbench.compute.text import first_sentence, markdown_table


def test_standard_error_is_the_sample_sd_over_root_n() -> None:
    x = np.random.default_rng(0).standard_normal(50)
    assert standard_error(x) == scipy.stats.sem(x)  # ddof = 1, not the population sd
    assert mean_se(x) == (x.mean(), scipy.stats.sem(x))
    assert standard_error(x[:1]) is None and mean_se(x[:1])[1] is None


def test_standard_error_along_an_axis() -> None:
    x = np.random.default_rng(1).standard_normal((40, 3))
    np.testing.assert_allclose(standard_error(x, axis=0), scipy.stats.sem(x, axis=0))


def test_first_sentence_clause_form_for_the_report() -> None:
    text = "One proof step (Eq. 64) is wrong: so Eq. 27 is not proven. Later."
    assert first_sentence(text) == "One proof step (Eq. 64) is wrong: so Eq. 27 is not proven."
    assert first_sentence(text, clause=True) == "One proof step (Eq. 64) is wrong"
    assert first_sentence("A claim (cifar10, see x. y) ends.", clause=True) == "A claim"
    assert first_sentence("abcdefghij klm.", limit=8) == "abcdefg…"


def test_markdown_table_escapes_cells() -> None:
    lines = markdown_table(["a", "b"], [["x|y", "two\nlines"]])
    assert lines == ["| a | b |", "|---|---|", "| x\\|y | two lines |", ""]
