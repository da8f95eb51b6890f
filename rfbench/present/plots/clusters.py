"""HRF Fig. 6 (App. H.3, docs/experiments.md#hrf-fig6): Gram-matrix MSE vs m on the clustered data
sets s1–s4; "FAVOR+" is SM⁺ = ``positive@iid`` (docs/methods.md#hrf-erratum-18)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from rfbench.present.plots import register_figure, style
from rfbench.present.plots.theory import metric
from rfbench.present.reference import paper_name

PROTOCOL_NAMES = {
    "paper": "paper replay\n(notebook's streams)",
    "rfbench": "rfbench protocol\n(registry, job seeds)",
}
_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _dataset_title(df: pd.DataFrame, dataset: str) -> str:
    """``s₁: σ = 1`` plus the data set's four s values (HRF App. H.3) on a second line."""
    rows = df[df["dataset"] == dataset]
    sigma = rows["sigma"].dropna()
    name = dataset.translate(_SUBSCRIPT)
    head = f"{name}: σ = {sigma.iloc[0]:.3g}" if len(sigma) else name
    s = metric(rows, "cluster_s").sort_values("pair")["value"]
    return head + ("\ns = " + ", ".join(f"{v:.2f}" for v in s) if len(s) else "")


def _stats(rows: pd.DataFrame) -> pd.DataFrame:
    """mse_mean, mse_min, mse_max (columns) by m (index) of one estimator's rows."""
    names = ["mse_mean", "mse_min", "mse_max"]
    rows = rows[rows["metric"].isin(names)]
    wide = rows.pivot_table(index="m", columns="metric", values="value").sort_index()
    return wide.reindex(columns=names)


def _key(ax, estimators: list[str], reps: int) -> None:
    """The legend in a strip of its own above the panels."""
    ax.axis("off")
    handles = [style.handle(e, paper_name(e, "hrf-clusters")) for e in estimators]
    handles += [
        Patch(color="0.5", alpha=0.25, label=f"min–max over {reps} repetitions"),
        style.theory_handle("closed-form expected MSE"),
    ]
    wide = ax.figure.get_figwidth() >= style.FULL_WIDTH
    ncol = len(handles) if wide else 2
    ax.legend(handles=handles, loc="center", ncol=ncol, fontsize=6.5, handlelength=2.0)


@register_figure(
    "hrf-fig6",
    title="HRF Fig. 6: Gram-matrix MSE vs m on clustered data s1-s4 (Hybrid-Cluster, FAVOR+, trig)",
)
def hrf_fig6(results: dict[str, pd.DataFrame]) -> Figure:
    """One panel per data set (columns) and protocol (rows: the replay of the paper's notebook,
    then rfbench's own estimators and streams): mean MSE over the repetitions vs m on a log axis,
    the min–max band (HRF Table 3's numbers), the closed form for iid projections dashed."""
    df = results["hrf-fig6"]
    means = metric(df, "mse_mean")
    protocols = [p for p in ("paper", "rfbench") if p in set(means["protocol"])]
    protocols += sorted(set(means["protocol"].dropna()) - set(protocols))
    datasets = list(dict.fromkeys(df["dataset"].dropna()))
    estimators = list(dict.fromkeys(means["estimator"]))
    theory = metric(df, "theory_mse")
    reps = int(means["n_trials"].max()) if len(means) else 0

    width = style.FULL_WIDTH if len(datasets) > 1 else style.COLUMN_WIDTH
    key_h = 0.2 if width >= style.FULL_WIDTH else 0.5
    fig = style.figure(width, key_h + 0.15 + 2.0 * len(protocols) + 0.2)
    ratios = [key_h / 2.0, *[1] * len(protocols)]
    gs = fig.add_gridspec(1 + len(protocols), len(datasets), height_ratios=ratios)
    _key(fig.add_subplot(gs[0, :]), estimators, reps)
    first = None
    for i, protocol in enumerate(protocols):
        for j, dataset in enumerate(datasets):
            ax = fig.add_subplot(gs[1 + i, j], sharey=first, sharex=first)
            first = first or ax
            here = df[(df["dataset"] == dataset) & (df["protocol"] == protocol)]
            for est in estimators:
                line = {"color": style.colour(est), "marker": style.marker(est)}
                stat = _stats(here[here["estimator"] == est])
                if stat.empty:
                    continue
                m = stat.index.to_numpy(float)
                spread = (stat["mse_min"], stat["mse_max"])
                ax.fill_between(m, *spread, color=line["color"], alpha=0.15, linewidth=0)
                ax.plot(m, stat["mse_mean"], **line)
                th = theory[(theory["dataset"] == dataset) & (theory["estimator"] == est)]
                th = th.sort_values("m")
                ax.plot(th["m"], th["value"], color=line["color"], **style.THEORY_LINE)
            ax.set_yscale("log")
            if i == 0:
                ax.set_title(_dataset_title(df, dataset), fontsize=7)
            ax.set_xlabel("no. random features m")
            ax.set_ylabel(f"{PROTOCOL_NAMES.get(protocol, protocol)}\nGram-matrix MSE")
            ax.label_outer()
    d = f", d = {int(df['d'].max())}" if df["d"].notna().any() else ""
    fig.suptitle(f"HRF Fig. 6: Gram-matrix MSE, clustered data{d}", fontsize=8)
    return fig
