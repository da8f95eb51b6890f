"""The worked examples of docs/extending.md and docs/architecture.md run as written.

Blocks that define a new name (a coupling, an experiment, a figure) are executed in an isolated
registry and then used end to end; blocks that show a built-in's own source ("This is `positive` in
full") are compiled and their imports executed, so a renamed API breaks this test, not a reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _blocks(page: str) -> list[str]:
    return BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))


def _imports(code: str) -> str:
    return "\n".join(line for line in code.splitlines() if line.startswith(("import ", "from ")))


@pytest.mark.parametrize("page", ["extending.md", "architecture.md"])
def test_every_block_compiles_and_its_imports_exist(page: str) -> None:
    blocks = _blocks(page)
    assert blocks
    for code in blocks:
        compile(code, page, "exec")
        exec(_imports(code), {})


def test_the_new_coupling_experiment_and_figure_run(isolated_registry, tmp_path: Path) -> None:
    from rfbench.compute.features import registry
    from rfbench.compute.results import load_results
    from rfbench.compute.runner import RunOptions, run
    from rfbench.present.plots import FIGURES

    names = {"antithetic": None, "class Bias(": None, "register_presentation(": None,
             "demo-bias": None}  # fmt: skip
    for code in _blocks("extending.md"):
        for key in names:
            if key in code:
                names[key] = code
    assert all(names.values()), [k for k, v in names.items() if v is None]
    namespace: dict = {}
    for code in names.values():
        # as a reader's module runs it: without this file's `from __future__ import annotations`
        # (a pydantic model's annotations must be evaluated where they are defined)
        exec(compile(code, "extending.md", "exec", dont_inherit=True), namespace)

    est = registry.get("trig@antithetic", m=8)
    draw = est.sample(np.random.default_rng(0), d=4, draws=3)
    W = draw.projections["omega"].W
    assert np.allclose(W[:, 4:], -W[:, :4])  # the second half negates the first

    config = {"name": "demo-bias", "figure": "demo-bias", "samples": 400, "r": [0.5]}
    out = run(
        "bias",
        config,
        RunOptions(out=tmp_path / "bias" / "demo-bias.parquet", backend="serial", quiet=True),
    )
    rows = load_results(out)
    bias = rows[rows["metric"] == "bias"]
    assert len(bias) == 2 and (bias["value"].abs() < 5 * bias["stderr"] + 1e-12).all()
    from rfbench.present.summaries import terminal_summary

    assert terminal_summary("bias", rows)[["estimator", "value"]].equals(
        bias.sort_values("estimator")[["estimator", "value"]]
    )
    figure = FIGURES["demo-bias"].draw({"demo-bias": rows})
    assert figure.axes


def test_the_report_claim_example_gives_its_verdict() -> None:
    text = (DOCS / "extending.md").read_text(encoding="utf-8")
    section = text[text.index("## A report claim") :]
    toml_text = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(BLOCK.search(section).group(1), "extending.md", "exec"), namespace)

    def rows(orf: float, stderr: float):  # type: ignore[no-untyped-def]
        import pandas as pd

        return pd.DataFrame(
            [
                {"experiment": "pointwise", "figure": "hrf-fig2", "estimator": est,
                 "metric": "rel_rmse", "value": v * (1 + theta), "stderr": stderr,
                 "n_trials": 1000, "r": 1.0, "theta": theta}
                for est, v in (("trig@orf", orf), ("trig@iid", 0.2))
                for theta in (0.0, 1.0, 2.0)
            ]
        )  # fmt: skip

    verdict = namespace["claim_verdict"]
    assert verdict(toml_text, rows(0.1, 0.001)) == "ordering confirmed"
    assert verdict(toml_text, rows(0.19, 0.05)) == "consistent"  # not by 2 standard errors
    assert verdict(toml_text, rows(0.3, 0.001)) == "does not hold"
