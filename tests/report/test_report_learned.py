"""The learned/local/data-aware attention section (issue 28) and its figure read every number from
the ``beyond-attention-learned`` rows: medians with intervals, Holm shares and fit costs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import rfbench.compute.experiments.attention.experiment  # noqa: F401 (its metric names)
from rfbench.compute.results import make_provenance, write_results
from rfbench.present.attention_stats import median_ci_text
from rfbench.present.plots import FIGURES, list_figures
from rfbench.present.plots.draw import draw_figure
from rfbench.present.report.beyond_attention import LEARNED as NAME
from rfbench.present.report.beyond_attention import learned_part, learned_section

HEADS = [(layer, head) for layer in range(2) for head in range(6)]


def rows(hedgehog_scale: float = 0.3, fit_s: float = 0.5) -> pd.DataFrame:
    """12 heads: uniform ≈ 0.8, positive ≈ 0.85 (z < 0), hedgehog ≈ scale (z ≫ 2)."""
    rng = np.random.default_rng(3)
    common = {"experiment": "attention", "figure": NAME, "kernel": "softmax", "tokens": 512,
              "fit_text": "GPL-3", "text": "GFDL-1.3", "n_trials": 10}  # fmt: skip
    out = []
    for layer, head in HEADS:
        at = {**common, "layer": layer, "head": head}
        out.append({**at, "kind": "baselines", "estimator": "uniform", "metric": "out_rel_frob",
                    "value": 0.8 + 0.01 * head, "stderr": None})  # fmt: skip
        learned = hedgehog_scale * (1 + 0.1 * rng.random())
        for est, value, z in (("positive@iid", 0.85, -1.0), ("hedgehog", learned, 9.0)):
            out.append({**at, "kind": "heads", "estimator": est, "metric": "out_rel_frob",
                        "value": value, "stderr": 0.01, "budget": 64, "z_uniform": z,
                        "beats_uniform": z > 2})  # fmt: skip
        out.append({**at, "kind": "heads", "estimator": "hedgehog", "metric": "fit_seconds",
                    "value": fit_s, "stderr": None, "budget": 64, "n_trials": 1})  # fmt: skip
    return pd.DataFrame(out)


def test_numbers_are_read_from_the_rows() -> None:
    df = rows()
    text = "\n".join(learned_part(df))
    hedgehog = df[(df["estimator"] == "hedgehog") & (df["metric"] == "out_rel_frob")]
    assert median_ci_text(hedgehog["value"].to_numpy()) in text
    assert "`hedgehog` | " in text and "100% (100%) of 12" in text and "0% (0%) of 12" in text
    assert "0.5 s (all 12: 6 s)" in text  # median fit and its total over the heads
    assert "fitted on the GPL-3 text's" in text and "held-out GFDL-1.3" in text
    assert "Best feature map at this budget: `hedgehog`" in text
    other = "\n".join(learned_part(rows(hedgehog_scale=0.6, fit_s=2.0)))
    assert other != text and "2 s (all 12: 24 s)" in other


def test_the_section_and_figure_come_from_the_results_folder(tmp_path: Path) -> None:
    assert learned_section(tmp_path) == []  # nothing run, nothing said
    prov = make_provenance(config={"name": NAME}, seed=0, command_line="test")
    write_results(rows(), tmp_path / "attention" / f"{NAME}.parquet", prov)
    assert learned_section(tmp_path)[0].startswith("### What approximates real attention")
    list_figures()
    outcome = draw_figure(FIGURES[NAME], tmp_path, tmp_path / "figures")
    assert not outcome.problem and (tmp_path / "figures" / f"{NAME}.png").stat().st_size > 1000
