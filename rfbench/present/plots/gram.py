"""Gram-matrix figures (experiment ``gram``): SimRF Fig. 7 and the Spectraformer CPU-proxy grid
(docs/experiments.md#simrf-fig7, #spectraformer-grid)."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from rfbench.compute.text import split_name
from rfbench.present.plots import register_figure, style
from rfbench.present.plots.theory import metric, simrf_name
from rfbench.present.reference import PAPER_NAMES
from rfbench.present.summaries.gram import GRID_PANELS


def _series(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """One metric of one estimator sorted by m, with x = m/d."""
    rows = metric(df, name).sort_values("m")
    return rows.assign(x=rows["m"] / rows["d"])


@register_figure(
    "simrf-fig7",
    title="SimRF Fig. 7: Gram-matrix squared Frobenius error per entry vs m/d, with closed form",
)
def simrf_fig7(results: dict[str, pd.DataFrame]) -> Figure:
    """Squared Frobenius error per Gram entry vs m/d, mean ± 1 s.e. (the paper's shading) and the
    closed form dashed (top, log y); empirical / closed form ± 1 s.e. (bottom)."""
    df = results["simrf-fig7"]
    if "inputs" in df:
        df = df[df["inputs"] == "self"]
    sigmas = sorted(df["sigma"].dropna().unique()) or [None]
    names = list(dict.fromkeys(df["estimator"]))
    fig, axes = style.new_figure(ncols=len(sigmas), nrows=2, height=1.8)
    for k, sigma in enumerate(sigmas):
        top, low = axes[0, k], axes[1, k]
        part = df if sigma is None else df[df["sigma"] == sigma]
        offsets = np.linspace(-0.04, 0.04, len(names))  # spread the ratio error bars
        for j, name in enumerate(names):
            rows = part[part["estimator"] == name]
            mc, th = _series(rows, "frob_sq_per_entry"), _series(rows, "theory_frob_sq_per_entry")
            line = {"color": style.coupling_colour(name), "marker": style.marker(name)}
            style.se_band(top, mc["x"], mc, label=f"{simrf_name(name)} ±1 s.e.", **line)
            if len(th):
                top.plot(th["x"], th["value"], color=line["color"], **style.THEORY_LINE)
                both = mc.merge(th[["m", "value"]], on="m", suffixes=("", "_th"))
                ratio = both["value"] / both["value_th"]
                x, err = both["x"] * (1 + offsets[j]), both["stderr"] / both["value_th"]
                low.errorbar(x, ratio, err, capsize=1.5, linewidth=0.8, **line)
        low.axhline(1.0, color="0.3", linewidth=0.8)
        for ax in (top, low):
            style.log_ticks(ax, sorted(part["m"].unique() / part["d"].max()))
        top.set_yscale("log")
        top.tick_params(labelbottom=False)
        low.set_xlabel("no. features m / d")
        n = int(metric(part, "frob_sq_per_entry")["n_trials"].max())
        d, npts = int(part["d"].max()), int(part["n_points"].max())
        sig = "" if sigma is None else f", σ = {sigma:g}"
        sizes = f"N = d = {d}" if npts == d else f"N = {npts}, d = {d}"
        top.set_title(f"SimRF Fig. 7: Gaussian Gram, {sizes}{sig}")
        low.set_title(f"empirical mean of {n} draws / closed form (±1 s.e.)", fontsize=7)
        if k == 0:
            top.set_ylabel("Σ(K − K̂)² / N²  (Frob. /d²)")
            low.set_ylabel("ratio")
            handles, _ = top.get_legend_handles_labels()
            handles.append(
                top.plot([], [], color="0.3", label="closed form", **style.THEORY_LINE)[0]
            )
            top.legend(handles=handles, loc="upper right", ncol=1, fontsize=6)
    return fig


SKIPPED_CELL = {"facecolor": "0.88", "hatch": "////", "edgecolor": "0.6", "linewidth": 0}
CELL_TEXT = {"ha": "center", "va": "center", "fontsize": 4.8}
COLOUR_PERCENTILE = 95
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _short(value: float) -> str:
    """Two significant digits without a leading zero: .081, .15, 1.0, 12."""
    text = f"{value:.2g}" if value < 100 else f"{value:.0f}"
    return text[1:] if text.startswith("0.") else text


def _grid_cells(df: pd.DataFrame, name: str, kernel: str, r: float) -> pd.DataFrame:
    """One row per estimator: component, weights, value (NaN if none), note (or None)."""
    part = df[(df["kernel"] == kernel) & (df["r"] == r)]
    values = metric(part, name).set_index("estimator")
    skipped = metric(part, "skipped").set_index("estimator")
    rows = []
    for est in dict.fromkeys(df["estimator"]):
        value, note = np.nan, None
        if est in values.index:
            value, note = float(values.at[est, "value"]), values.at[est, "note"]
        elif est in skipped.index:
            note = skipped.at[est, "note"] or "skipped"
        # the kernel name generalised, so one footnote serves both kernels
        written = isinstance(note, str) and note
        note = re.sub(r"'(softmax|gaussian)'", "'<kernel>'", note) if written else None
        if note is not None:  # a reason in words, not the exception that carried it
            note = "not computed: " + re.sub(r"^[A-Za-z]*(Error|Exception|Warning): ", "", note)
        if note is None and est not in values.index:
            continue
        component, weights = split_name(est)
        rows.append((component, weights or "—", value if np.isfinite(value) else np.nan, note))
    return pd.DataFrame(rows, columns=["component", "weights", "value", "note"])


def _heat(ax: Axes, cells: pd.DataFrame, rows: list, cols: list, notes: dict) -> None:
    """Annotated log-colour heat map; cells without a value hatched with their note number."""
    table = cells.pivot_table(
        index="weights", columns="component", values="value", aggfunc="first", dropna=False
    ).reindex(index=rows, columns=cols)
    finite = table.to_numpy(float)[np.isfinite(table.to_numpy(float))]
    if finite.size == 0:
        finite = np.array([1.0])
    top = np.percentile(finite, COLOUR_PERCENTILE)  # outliers (e.g. sgq) saturate
    norm = LogNorm(vmin=finite.min(), vmax=max(top, finite.min() * 1.01), clip=True)
    grid = np.ma.masked_invalid(table.to_numpy(float))
    ax.imshow(grid, cmap="YlOrRd", norm=norm, aspect="auto", interpolation="nearest")
    for rec in cells.itertuples():
        i, j = rows.index(rec.weights), cols.index(rec.component)
        note = rec.note if isinstance(rec.note, str) else None
        mark = "" if note is None else str(notes[note]).translate(_SUPERSCRIPT)
        if np.isfinite(rec.value):
            colour = "white" if norm(rec.value) > 0.65 else "black"
            ax.text(j, i, _short(rec.value) + mark, color=colour, **CELL_TEXT)
        else:
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, **SKIPPED_CELL))
            ax.text(j, i, f"[{notes[note]}]", **CELL_TEXT)
    ax.set_xticks(range(len(cols)), cols, rotation=50, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(rows)), rows)
    ax.tick_params(length=0, labelsize=6)
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)


def _footnotes(notes: dict[str, int], cells: pd.DataFrame) -> list[str]:
    """One line per note: its number, the estimators it concerns (``comp@*`` when all), text."""
    lines = []
    for note, k in notes.items():
        hit = cells[cells["note"] == note].drop_duplicates(["component", "weights"])
        names = []
        for comp, g in hit.groupby("component", sort=False):
            total = cells[cells["component"] == comp]["weights"].nunique()
            if g["weights"].nunique() == total and total > 1:
                names.append(f"{comp}@*")
            else:
                names += [f"{comp}@{w}" for w in g["weights"]]
        shown = ", ".join(names[:6]) + (f", … ({len(names)} cells)" if len(names) > 6 else "")
        lines.append(f"[{k}] {shown}: {note}")
    return lines


@register_figure(
    "spectraformer-grid",
    title="Spectraformer CPU proxy: component × weights grid of relative Frobenius errors",
)
def spectraformer_grid(results: dict[str, pd.DataFrame]) -> Figure:
    """Heat maps (rows: weights, columns: components) per metric/kernel (columns) and r (rows),
    cells annotated; a cell not computed is hatched and numbered, its reason in a footnote."""
    df = results["spectraformer-grid"]
    if "inputs" in df:
        df = df[df["inputs"] == "attention"]
    df = df[df["m"] == df["m"].max()]  # one m per figure: the largest
    radii = sorted(df["r"].dropna().unique())
    panels = [p for p in GRID_PANELS if len(metric(df[df["kernel"] == p[1]], p[0]))]
    cells = {(p, r): _grid_cells(df, p[0], p[1], r) for p in panels for r in radii}
    every = pd.concat(cells.values(), ignore_index=True)
    rows = list(dict.fromkeys(every["weights"]))
    cols = list(dict.fromkeys(every["component"]))
    notes = {n: k + 1 for k, n in enumerate(dict.fromkeys(every["note"].dropna()))}
    lines = _footnotes(notes, every)

    cell_h, extra = 0.15, 0.5  # inches per row of cells; titles of a row of panels
    panel_h = [len(rows) * cell_h + extra] * len(radii)
    panel_h[-1] += 0.5  # the component names under the last row
    ratios = [*panel_h, 0.2 + 0.1 * (len(lines) + 2)]
    fig = style.figure(style.FULL_WIDTH, sum(ratios) + 0.3)
    gs = fig.add_gridspec(len(radii) + 1, max(1, len(panels)), height_ratios=ratios)
    for i, r in enumerate(radii):
        for j, panel in enumerate(panels):
            ax = fig.add_subplot(gs[i, j])
            _heat(ax, cells[(panel, r)], rows, cols, notes)
            ax.set_title(f"{panel[2]}\nr = {r:g}", fontsize=7)
            ax.tick_params(labelleft=j == 0, labelbottom=i == len(radii) - 1)
    key = fig.add_subplot(gs[-1, :])
    key.axis("off")
    text = [
        f"Cells: mean over draws; colour log-scaled per panel from its smallest value to its "
        f"{COLOUR_PERCENTILE}th percentile (darker = larger error; larger values saturate). "
        f"Names: {', '.join(f'{k} = {v}' for k, v in PAPER_NAMES['spectraformer'].items())}.",
        *lines,
    ]
    wrapped = [textwrap.fill(t, 140, subsequent_indent="    ") for t in text]
    footer = key.text(0, 1, "\n".join(wrapped), va="top", fontsize=6, transform=key.transAxes)
    footer.set_in_layout(False)  # the strip's height is reserved above
    sizes = {k: int(df[k].max()) for k in ("d", "m", "n_points")}
    n = int(df[df["metric"].isin([p[0] for p in panels])]["n_trials"].max())
    fig.suptitle(
        "Spectraformer CPU proxy (docs/experiments.md#spectraformer-grid):\n"
        f"q, k ~ N(0, r²I/d), d = {sizes['d']}, m = {sizes['m']}, {sizes['n_points']} queries "
        f"and keys, {n} draws per cell",
        fontsize=8,
    )
    return fig
