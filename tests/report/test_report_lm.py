"""The LM subsection of "Does it matter downstream?" and its figure read every number from the
rows of configs/beyond/lm.toml (docs/experiments.md#language-model)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfbench.present.report import downstream_similarity as downstream_lm
from rfbench.present.report.downstream_similarity import lm_section, lm_summary


def lm_rows(seed: int = 0) -> pd.DataFrame:
    """Rows shaped like ``rfbench lm``'s: exact, uniform and two methods, every layer at two
    budgets, one layer at two layers, the passkey at two lengths."""
    rng = np.random.default_rng(seed)
    rows = []
    base = {"experiment": "lm", "kernel": "softmax", "dataset": "smollm2-135m", "tokens": 256,
            "sequences": 1, "text": "GFDL-1.3", "kind": "perplexity", "layer": None}  # fmt: skip
    exact, uniform = np.log(18.0), np.log(900.0)

    def perplexity(name, f, loss, layer=None, se=None):
        for metric, value in (("perplexity", np.exp(loss)), ("ppl_ratio", np.exp(loss - exact)),
                              ("gap_recovered", (uniform - loss) / (uniform - exact))):  # fmt: skip
            rows.append({**base, "estimator": name, "budget": f, "layer": layer, "metric": metric,
                         "value": value, "stderr": se, "n_trials": 3})  # fmt: skip

    perplexity("exact", None, exact)
    perplexity("uniform", None, uniform)
    for f in (16, 64):
        perplexity("positive@orf", f, np.log(1000.0 / f), se=0.1)
        perplexity("window", f, np.log(18.0 + 64 / f))
    for layer in (0, 29):
        perplexity("uniform", None, exact + 1.0 - layer / 30, layer)
        perplexity("positive@orf", 64, exact + 0.5 * rng.random(), layer, se=0.01)
    for length in (256, 512):
        for name, recall in (("exact", 1.0), ("uniform", 0.0), ("window", 0.0),
                             ("positive@orf", 0.0)):  # fmt: skip
            for metric in ("passkey_recall", "passkey_token_accuracy"):
                rows.append({**base, "kind": "passkey", "tokens": length, "estimator": name,
                             "budget": None if name in ("exact", "uniform") else 64,
                             "metric": metric, "value": recall, "stderr": 0.0,
                             "n_trials": 3})  # fmt: skip
    for h in range(4):
        for name, err in (("window", 0.1 * (h + 1)), ("positive@orf", 1.0)):
            rows.append({**base, "kind": "heads", "layer": 0, "head": h, "estimator": name,
                         "budget": 64, "metric": "out_rel_frob", "value": err, "stderr": 0.01,
                         "n_trials": 3, "beats_uniform": name == "window" or h == 0})  # fmt: skip
    rows.append({**base, "estimator": "t2r", "budget": 16, "metric": "skipped", "value": 1.0,
                 "stderr": None, "n_trials": 0})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_section_quotes_exact_uniform_and_each_ratio(monkeypatch) -> None:
    df = lm_rows()
    monkeypatch.setattr(downstream_lm, "load_named", lambda _d, _n: df)
    text = "\n".join(lm_section(None))
    assert text.startswith("### A causal language model")
    assert "**18**" in text and "900 (50× exact)" in text
    line = next(s for s in text.splitlines() if s.startswith("| `positive@orf` |"))
    assert "| 3.47 ± 0.1 | 0.868 ± 0.1 |" in line  # 1000/16/18 and 1000/64/18
    assert "`window` (1.06× exact)" in text  # the closest to exact at F = 64
    passkey = [s for s in text.splitlines() if s.startswith("| `exact` |")][-1]
    assert passkey == "| `exact` | 100% (1) | 100% (1) |"
    assert "One layer swapped at a time (F = 64)" in text and "0, 29" in text
    assert "No finite pass" in text and "`t2r` at F = 16" in text
    assert "| `t2r` | not finite | not finite | not finite |" in text
    assert "| `window` | 0.25 | 100% |" in text and "| `positive@orf` | 1 | 25% |" in text


def test_the_report_paragraph_quotes_the_headline_numbers(monkeypatch) -> None:
    df = lm_rows()
    monkeypatch.setattr(downstream_lm, "load_named", lambda _d, _n: df)
    lines = lm_summary(None)
    assert len(lines) == 4  # short: REPORT.md
    assert lines[0].startswith("### A causal language model")
    text = lines[2]
    assert "exact perplexity 18 " in text and "`uniform` 50×" in text
    assert "`window` 1.06×" in text and "the feature maps 0.868–0.868×" in text
    assert "passkey recall survives only with `exact`" in text


def test_no_rows_no_section(monkeypatch) -> None:
    monkeypatch.setattr(downstream_lm, "load_named", lambda _d, _n: None)
    assert lm_summary(None) == [] and lm_section(None) == []


def test_the_figure_draws_three_panels() -> None:
    from rfbench.present.plots.lm import NAME, lm_downstream

    fig = lm_downstream({NAME: lm_rows()})
    titles = [ax.get_title() for ax in fig.axes]
    assert "every layer swapped" in titles and "passkey, F = 64" in titles
    assert any(t.startswith("one layer swapped") for t in titles)
