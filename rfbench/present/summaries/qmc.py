"""The presentation of ``rfbench qmc``: the rows printed after a run."""

from __future__ import annotations

import pandas as pd

from rfbench.compute.text import split_name, weights_of
from rfbench.present import reference
from rfbench.present.summaries import register_presentation


@register_presentation("qmc")
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """MSE ± std in units of 1e-3 per (data set, estimator), beside the paper's Table 1; a
    trailing * marks an MSE its sample does not resolve (footnote in ``attrs``)."""
    rows, published = [], paper_table1()
    keys = ["dataset", "norm", "estimator"]
    mse = results[results["metric"] == "mse"]
    unresolved = set()
    if "resolved" in mse:
        bad = mse[mse["resolved"].eq(False).fillna(False).astype(bool)]
        unresolved = set(bad[keys].itertuples(index=False, name=None))
    table = results.pivot_table(index=keys, columns="metric", values="value", sort=False)
    for (dataset, norm, est), row in table.iterrows():
        col = paper_column(est) or ""
        paper = published.get((dataset, col))
        star = " *" if (dataset, norm, est) in unresolved else ""
        theory = row.get("theory_mse")
        rows.append(
            {
                "dataset": dataset,
                "norm": norm,
                "estimator": est,
                "paper column": col,
                "mse×1e3": f"{1e3 * row['mse']:.3f} ± {1e3 * row['mse_std']:.3f}{star}",
                "theory×1e3": f"{1e3 * theory:.3f}" if pd.notna(theory) else "",
                "paper×1e3": f"{paper[0]:.2f} ± {paper[1]:.2f}" if paper else "",
            }
        )
    out = pd.DataFrame(rows)
    if unresolved:
        out.attrs["footnote"] = (
            "* the sample does not resolve this MSE: fewer than 30 draws expected where its "
            "tail lives for some pair (rfbench.compute.features.theory.resolution)"
        )
    return out


def paper_column(estimator: str) -> str | None:
    """The column of HRF Table 1 an estimator stands for (None for our extra baselines)."""
    head, weights = split_name(estimator)
    if head == "angular-hybrid":
        return {"orf": "HRF-ort", "iid": "HRF-iid"}.get(weights_of(estimator))
    return PAPER_COLUMN.get(weights or "")


def paper_table1() -> dict[tuple[str, str], tuple[float, float]]:
    """HRF Table 1 (rfbench.present.reference): (data set, paper column) -> (MSE, ±) in units of
    1e-3."""
    cells = reference.table("hrf-table1", "dataset", "estimator")
    return {
        (dataset, paper_column(est) or est): (e.value, e.std) for (dataset, est), e in cells.items()
    }


#: the paper's column for a base estimator's coupling (hybrids: 'HRF-' + ort/iid); ORF-Had is
#: the SORF of Yu et al. 2016, whom HRF Table 1 cites (docs/experiments.md#hrf-table1)
PAPER_COLUMN = {
    "orf": "ORF-reg",
    "sorf": "ORF-Had",
    "orf-fast": "ORF-Had (χ row norms)",
    "halton": "Halton-R",
}
