"""Closed forms in checks: compare closed-form values where rows have them, and closed-form
standard errors of a bias (check keys ``theory_metric`` and ``theory_stderr``,
:mod:`rfbench.reference`).

An empirical maximum or MSE of a heavy-tailed estimator (SM⁺⁺ at large ‖x + y‖) from a sample
that never reaches the region carrying its second moment is far below the truth, and its sample
standard error is meaningless: a check comparing estimators' errors uses the closed form where
one exists (HRF Lemma 2.2, Thm 3.1; CSE Thm 3.1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from rfbench.report.frames import key_columns, plain


def _theory_values(rows: pd.DataFrame, theory_metric: str) -> dict[tuple[Any, ...], float]:
    """Point (key columns but ``metric``) → value of the ``theory_metric`` row there."""
    keys = [c for c in key_columns(rows) if c != "metric"]
    theory = rows[rows["metric"] == theory_metric]
    return {
        tuple(plain(v) for v in row): float(value)
        for row, value in zip(
            theory[keys].itertuples(index=False, name=None), theory["value"], strict=True
        )
    }


def _point_keys(rows: pd.DataFrame) -> list[tuple[Any, ...]]:
    keys = [c for c in key_columns(rows) if c != "metric"]
    return [tuple(plain(v) for v in row) for row in rows[keys].itertuples(index=False, name=None)]


def prefer_closed_form(rows: pd.DataFrame, metric: str, theory_metric: str) -> pd.DataFrame:
    """Rows of ``metric`` with the value of ``theory_metric`` at the same point where it exists.

    A closed form is exact (standard error 0) and needs no sample, so it is resolved; rows
    without one keep their empirical value (and their ``resolved`` flag). The column
    ``closed_form`` records which.
    """
    if rows.empty or "metric" not in rows.columns:
        return rows
    theory = _theory_values(rows, theory_metric)
    out = rows.copy()
    out["closed_form"] = False
    mask = (out["metric"] == metric).to_numpy()
    idx = [i for i, k in zip(out.index[mask], _point_keys(out[mask]), strict=True) if k in theory]
    if idx:
        keys = _point_keys(out.loc[idx])
        out.loc[idx, "value"] = [theory[k] for k in keys]
        out.loc[idx, "stderr"] = 0.0
        out.loc[idx, "closed_form"] = True
        if "resolved" in out.columns:
            out.loc[idx, "resolved"] = True
    return out


def closed_form_stderr(rows: pd.DataFrame, metric: str, theory_mse: str) -> pd.DataFrame:
    """Rows of ``metric`` (a bias or mean) with standard error √(MSE/n) from the closed-form MSE.

    Under the claim that the estimator is unbiased its variance is its MSE, so the standard
    error of a mean of ``n_trials`` estimates is √(theory_mse / n_trials); the sample standard
    error of a heavy-tailed estimator (SM⁺⁺ at large ‖x + y‖) is far too small.
    """
    if rows.empty or "metric" not in rows.columns:
        return rows
    theory = _theory_values(rows, theory_mse)
    out = rows.copy()
    mask = (out["metric"] == metric).to_numpy()
    for i, k in zip(out.index[mask], _point_keys(out[mask]), strict=True):
        n = plain(out.at[i, "n_trials"])
        if k in theory and n:
            out.at[i, "stderr"] = math.sqrt(theory[k] / float(n))
    return out


def closed_form_note(rows: pd.DataFrame, check: Mapping[str, Any]) -> str:
    """Which values the check compares: closed forms, closed-form standard errors."""
    if "theory_metric" in check and "closed_form" in rows.columns:
        mine = rows[rows["metric"] == check["metric"]]
        n = int(mine["closed_form"].sum())
        return (
            f"by closed form ({check['theory_metric']}) for {n} of {len(mine)} rows, "
            "empirical values elsewhere"
        )
    if "theory_stderr" in check:
        return f"standard errors from the closed form √({check['theory_stderr']}/n)"
    return ""
