"""Issue 39: the terminal tables after a run say their metric and which way is better, sort by
it and compare like with like (attention, classify, pointwise)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rfbench.present.summaries.attention import summary as attention_summary
from rfbench.present.summaries.classify import summary as classify_summary
from rfbench.present.summaries.pointwise import summary as pointwise_summary


def _attention_rows() -> pd.DataFrame:
    rows = []
    for head in range(4):
        base = {"layer": 0, "head": head, "tokens": 512, "metric": "out_rel_frob",
                "dataset": "all-MiniLM-L6-v2@0123456789abcdef"}  # fmt: skip
        for est, level in (("positive@iid", 0.9), ("top-k", 0.1), ("window", 0.3)):
            for budget in (16, 256):
                rows.append({**base, "kind": "heads", "estimator": est, "budget": budget,
                             "value": level * 16 / budget, "z_uniform": 5.0})  # fmt: skip
        rows.append({**base, "kind": "baselines", "estimator": "uniform", "value": 0.85})
        for rank in (16, 256):
            rows.append({**base, "kind": "baselines", "estimator": "best-rank", "rank": rank,
                         "budget": rank, "value": 1.0 / rank})  # fmt: skip
    return pd.DataFrame(rows)


def test_attention_table_is_sorted_says_its_metric_and_compares_at_one_budget() -> None:
    table = attention_summary(_attention_rows())
    methods = table[table["metric"].str.contains("lower is better")]
    assert list(methods["estimator"]) == ["top-k", "window", "positive@iid"]
    assert methods["value"].is_monotonic_increasing and set(methods["budget"]) == {256}
    best_rank = table[table["estimator"] == "best-rank"]
    assert list(best_rank["budget"]) == [256] and best_rank["value"].iloc[0] == 1 / 256
    assert "heads_beating_uniform" in table and "beats_uniform" not in table
    assert table.attrs["title"] == "all-MiniLM-L6-v2, bidirectional, T = 512"
    assert "lower is better" in table.attrs["caption"] and "F = 256" in table.attrs["caption"]


def test_attention_table_of_a_language_model_adds_its_perplexity_at_the_largest_budget() -> None:
    cells = (
        ("exact", None, 1.0, None),
        ("uniform", None, 90.0, None),
        ("positive@iid", 16, 70.0, 9.0),
        ("positive@iid", 64, 40.0, 5.0),
        ("window", 64, 3.0, None),
    )
    ppl = [
        {"kind": "perplexity", "metric": "ppl_ratio", "estimator": est, "budget": budget,
         "value": value, "stderr": se}
        for est, budget, value, se in cells
    ]  # fmt: skip
    table = attention_summary(pd.concat([_attention_rows(), pd.DataFrame(ppl)]))
    rows = table[table["metric"].str.startswith("perplexity / exact")]
    assert list(rows["estimator"]) == ["exact", "window", "positive@iid", "uniform"]
    assert rows["value"].is_monotonic_increasing and rows["stderr"].iloc[2] == 5.0
    assert "perplexity / exact" in table.attrs["caption"]
    assert not attention_summary(_attention_rows())["metric"].str.startswith("perplexity").any()


def test_classify_table_names_its_metric_and_m_and_puts_the_best_first() -> None:
    rows = [
        {"dataset": ds, "estimator": est, "m": 4, "metric": "accuracy", "value": acc,
         "sigma": 1.0, "note": None}
        for ds in ("wine", "cmc")
        for est, acc in (("trig@iid", 0.6), ("positive@orf", 0.8), ("exact", 0.9))
    ]  # fmt: skip
    table = classify_summary(pd.DataFrame(rows))
    caption = table.attrs["caption"]
    assert "test accuracy (higher is better)" in caption and "m = 4" in caption
    estimators = [c for c in table.columns if "@" in str(c)]
    assert estimators == ["positive@orf", "trig@iid"]


def _curve(estimator: str, r: float, values, theory=None) -> list[dict]:
    rows = []
    for theta, value in zip(np.linspace(0, np.pi, len(values)), values, strict=True):
        base = {"estimator": estimator, "r": r, "m": 16, "theta": theta}
        rows.append({**base, "metric": "rel_rmse", "value": value, "resolved": True})
        if theory is not None:
            rows.append({**base, "metric": "theory_rel_rmse", "value": theory})
    return rows


def test_pointwise_rank_never_mixes_closed_form_and_empirical_maxima() -> None:
    """A plugin copy of positive@orf without a closed form (empirical max 0.9) must not outrank
    the original (closed form 0.8, empirical 0.95) by being compared on another quantity."""
    rows = [
        *_curve("positive@orf", 1.0, [0.5, 0.95], theory=0.8),
        *_curve("copy@orf", 1.0, [0.5, 0.9]),
        *_curve("positive@orf", 2.0, [0.5, 0.7], theory=0.6),
        *_curve("trig@orf", 2.0, [0.5, 0.9], theory=0.9),
    ]
    table = pointwise_summary(pd.DataFrame(rows))
    at_1 = table[table["r"] == 1.0].set_index("estimator")
    assert set(at_1["ranked_by"]) == {"empirical"}
    assert at_1.loc["copy@orf", "rank"] == 1 and at_1.loc["positive@orf", "rank"] == 2
    at_2 = table[table["r"] == 2.0].set_index("estimator")
    assert set(at_2["ranked_by"]) == {"theory"} and at_2.loc["positive@orf", "rank"] == 1
    assert list(table["rank"]) == [1, 2, 1, 2]  # sorted by rank within each r
    assert "lower is better" in table.attrs["caption"]


def test_gram_table_says_the_lengthscale_rule_not_sigma_0() -> None:
    """Issue 39: gram and vrc-kernel printed ``sigma 0`` for the σ of the published rule."""
    from rfbench.present.summaries.gram import RULE
    from rfbench.present.summaries.gram import summary as gram_summary

    rows = pd.DataFrame(
        [{"inputs": "dataset", "dataset": "wine", "estimator": est, "kernel": "gaussian",
          "metric": "frob_sq_per_entry", "m": 13, "d": 13, "sigma": 0.0, "value": v}
         for est, v in (("trig@iid", 0.02), ("trig@pnc", 0.01))]
    )  # fmt: skip
    table = gram_summary(rows)
    assert set(table["sigma"]) == {RULE}


def test_every_experiment_has_one_presentation_module() -> None:
    """Each built-in experiment's summary and chart view are declared in
    ``rfbench/present/summaries/<name>.py`` and nowhere else."""
    from rfbench.compute.experiments import list_experiments
    from rfbench.present.summaries import presentations

    builtin = {e.name for e in list_experiments() if type(e).__module__.startswith("rfbench.")}
    ours = {n: p.summary.__module__ for n, p in presentations().items()}
    ours = {n: m for n, m in ours.items() if m.startswith("rfbench.")}
    assert set(ours) == builtin
    assert all(m == f"rfbench.present.summaries.{n}" for n, m in ours.items())


def test_which_way_is_better_is_declared_beside_the_metrics_only() -> None:
    """No string in the package but schema.better's says which way a metric is better."""
    import ast
    from pathlib import Path

    from rfbench.compute import schema

    assert schema.HIGHER_IS_BETTER <= set(schema.METRICS)
    assert set(schema.HEADLINE_METRICS) <= set(schema.METRICS)
    package = Path(schema.__file__).parents[1]
    found = []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef) and node.body
            and isinstance(node.body[0], ast.Expr)
        }  # fmt: skip
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and id(node) not in docstrings and " is better" in text:
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert found and all(f.startswith("compute/schema.py:") for f in found), found
