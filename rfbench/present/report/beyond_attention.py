"""The "Beyond the papers" parts on real data: attention heads of a pretrained transformer
(``rfbench attention``, docs/experiments.md#beyond-attention) and random features against Nyström
and the rank-r bound (``configs/beyond/nystrom.toml``, docs/experiments.md#beyond-nystrom).

Every number is read from the results when the report is rendered, with its uncertainty: medians
over heads with the share of heads in which an estimator beats uniform attention significantly
(one-sided z > 2 over the draws, the experiment's own test), swap-in scores with their standard
errors over trials, Gram errors with their standard errors. Nothing here computes an estimate.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from rfbench.compute.results import find_result, load_results

ATTENTION, NYSTROM = "beyond-attention", "beyond-nystrom"


def _load(results_dir: Path, name: str) -> pd.DataFrame | None:
    path = find_result(results_dir, name)
    return load_results(path) if path is not None else None


def _fmt(value: float, se: float | None = None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    text = f"{value:.{digits}g}"
    return f"{text} ± {se:.1g}" if se is not None and math.isfinite(se) and se > 0 else text


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows] + [""]


def attention_part(df: pd.DataFrame) -> list[str]:
    """Per estimator at the largest m and sequence length: median output error over heads, the
    share of heads where it beats uniform attention, non-positive normalisers, swap-in cosine."""
    heads = df[df["kind"] == "heads"]
    if heads.empty:
        return []
    tokens, m = int(heads["tokens"].max()), int(heads["m"].max())
    at = heads[(heads["tokens"] == tokens) & (heads["m"] == m)]
    out = at[at["metric"] == "out_rel_frob"]
    base = df[(df["kind"] == "baselines") & (df["metric"] == "out_rel_frob")]
    base = base[base["tokens"] == tokens] if "tokens" in base else base
    uniform = base[base["estimator"] == "uniform"]["value"]
    swap = df[(df["kind"] == "swap") & (df["metric"] == "swap_cosine")].set_index("estimator")
    rows = []
    for est, part in out.groupby("estimator", sort=False):
        beats = part["beats_uniform"].dropna().astype(bool)
        bad = at[(at["estimator"] == est) & (at["metric"] == "bad_normaliser")]["value"]
        cos = swap.loc[est] if est in swap.index else None
        rows.append([
            f"`{est}`",
            _fmt(float(np.median(part["value"]))),
            f"{beats.mean():.0%} of {len(beats)}" if len(beats) else "—",
            _fmt(float(bad.mean())) if len(bad) else "—",
            _fmt(float(cos["value"]), float(cos["stderr"])) if cos is not None else "—",
        ])  # fmt: skip
    uniform_cos = swap.loc["uniform", "value"] if "uniform" in swap.index else float("nan")
    lines = [
        "### Real attention (`rfbench attention`, all-MiniLM-L6-v2)",
        "",
        f"Every head of every layer on {tokens} tokens of English text, m = {m} projections, "
        "10 draws per head. Output error ‖Ô − O‖_F/‖O‖_F: median over heads. Uniform attention "
        f"(the mean of V) has median {_fmt(float(np.median(uniform)))}, a zero output 1. *Beats "
        "uniform*: one-sided z > 2 over the draws in that head. Swap-in: cosine between the "
        "sentence embeddings with every layer's softmax replaced (m = 64) and the exact ones, "
        f"± one standard error over trials; uniform attention scores {_fmt(uniform_cos)}.",
        "",
    ]
    lines += _table(
        ["estimator", "median output error", "beats uniform", "non-positive normalisers",
         "swap-in cosine"], rows,
    )  # fmt: skip
    return lines


def nystrom_part(df: pd.DataFrame) -> list[str]:
    """Gram RMSE per data set at m = d: random features, Nyström and the rank-m bound."""
    rows = []
    for dataset, part in df.groupby("dataset", sort=False):
        d = int(part["d"].iloc[0])
        at = part[part["m"] == d]
        emp = at[at["metric"] == "frob_sq_per_entry"].set_index("estimator")
        oracle = at[(at["metric"] == "oracle_frob_sq_per_entry") & (at["features"] == d)]
        cells = []
        for est in emp.index:
            mse, se = float(emp.loc[est, "value"]), emp.loc[est, "stderr"]
            se_rmse = float(se) / (2 * math.sqrt(mse)) if pd.notna(se) and mse > 0 else None
            flag = emp.loc[est, "resolved"] if "resolved" in emp else None
            unresolved = flag is not None and not pd.isna(flag) and not bool(flag)
            heavy = " (unresolved: heavy tail, closed form above)" if unresolved else ""
            cells.append(f"`{est}` {_fmt(math.sqrt(mse), se_rmse)}{heavy}")
        bound = math.sqrt(float(oracle["value"].min())) if len(oracle) else float("nan")
        rows.append([dataset, d, "; ".join(cells), _fmt(bound)])
    return [
        "### Random features vs Nyström (`configs/beyond/nystrom.toml`)",
        "",
        "Gaussian-kernel Gram RMSE (± one standard error) at m = d projections or landmarks, "
        "beside the best rank-d matrix (a bound, not an estimator).",
        "",
        *_table(["data set", "d", "Gram RMSE at m = d", "rank-d bound"], rows),
    ]


def real_data_section(results_dir: Path) -> list[str]:
    """The attention and Nyström parts (each left out when its result file is missing)."""
    lines: list[str] = []
    attention = _load(results_dir, ATTENTION)
    if attention is not None:
        lines += attention_part(attention)
    nystrom = _load(results_dir, NYSTROM)
    if nystrom is not None:
        lines += nystrom_part(nystrom)
    return lines
