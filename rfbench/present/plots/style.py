"""One style for every figure: fixed colour and marker per estimator (and a palette for charts
whose estimators these do not tell apart), paper-column size, saving.

Colours come from the estimator's *family* (component or hybrid) and markers from its coupling,
so ``trig@iid`` and ``trig@orf`` share a colour and differ by marker in every figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are files; never open a window

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from rfbench.compute.results import atomic_write  # noqa: E402
from rfbench.compute.text import family_of, weights_of  # noqa: E402

COLUMN_WIDTH = 3.4  # inches: one column of a two-column paper
FULL_WIDTH = 7.0

# Okabe–Ito colour-blind-safe palette, then tab10 for the rest.
FAMILY_COLOURS: dict[str, str] = {
    "trig": "#D55E00",
    "trig-phase": "#A6761D",  # DERF's random-phase TrigRF, beside the [sin, cos] trig
    "hyperbolic": "#0072B2",
    "positive": "#56B4E9",
    "angular-hybrid": "#009E73",
    "cse": "#009E73",
    "gaussian-hybrid": "#CC79A7",
    "cluster-hybrid": "#E69F00",
    "gerf": "#0072B2",
    "aderf": "#E69F00",
    "sderf": "#009E73",
    "saderf": "#CC79A7",
    "complex-exp": "#F0E442",
    "sign": "#999999",
    "exact": "#000000",
}
COUPLING_MARKERS: dict[str, str] = {
    "iid": "o",
    "orf": "s",
    "simrf": "^",
    "simrf-plus": "v",
    "sorf": "D",
    "orf-fast": "d",
    "simrf-fast": "<",
    "halton": "P",
    "sobol": "X",
    "lattice": "*",
    "mm": "h",
    "ssf": "p",
    "fastfood": ">",
    "scrf": "8",
    "sgq": "H",
    "sgq-sampled": "+",
}
COUPLING_COLOURS: dict[str, str] = {  # when couplings, not components, are compared (SimRF)
    "iid": "#D55E00",
    "orf": "#0072B2",
    "simrf": "#009E73",
    "simrf-plus": "#CC79A7",
    "orf-fast": "#56B4E9",
    "simrf-fast": "#E69F00",
    "exact": "#000000",
}
_EXTRA = plt.get_cmap("tab10").colors
#: Closed-form curves are dashed in every figure.
THEORY_LINE = {"linestyle": (0, (4, 2)), "linewidth": 1.0}


def colour(estimator: str) -> str:
    """The colour of an estimator's family (stable across figures)."""
    family = family_of(estimator)
    fixed = FAMILY_COLOURS.get(family)
    return fixed or matplotlib.colors.to_hex(_EXTRA[sum(map(ord, family)) % len(_EXTRA)])


def coupling_colour(estimator: str) -> str:
    """The colour of an estimator's coupling, for figures that compare couplings."""
    fixed = COUPLING_COLOURS.get(estimator)  # "exact" and bare coupling names
    return fixed or COUPLING_COLOURS.get(weights_of(estimator)) or colour(estimator)


def marker(estimator: str) -> str:
    return COUPLING_MARKERS.get(weights_of(estimator), "o")


#: 24 colours: as many as a chart shows estimators (choose.MAX_ESTIMATORS), so none recycles
PALETTE = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
    "#9467BD", "#8C564B", "#17BECF", "#BCBD22", "#7F7F7F", "#1F3A93",
    "#882255", "#117733", "#AA4499", "#44AA99", "#999933", "#332288",
    "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BB5566",
)  # fmt: skip
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<")
#: baselines (exact, uniform, zero) are drawn in greys, darkest first
GREYS = ("#000000", "#666666", "#999999", "#BBBBBB")


def assign(estimators: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``{estimator: (colour, marker)}``: the paper figures' colours (by family, else by coupling:
    :func:`colour`, :func:`coupling_colour`) when they tell the estimators apart, else one of the 24
    of :data:`PALETTE` each, with a marker of its own among neighbours (and another marker in
    each further round of colours)."""
    for choose, part, known in (
        (colour, family_of, FAMILY_COLOURS),
        (coupling_colour, weights_of, COUPLING_COLOURS),
    ):
        colours = [choose(e) for e in estimators]
        fixed = all(part(e) in known for e in estimators)
        if fixed and len(set(colours)) == len(colours) and "#000000" not in colours:
            return {e: (c, marker(e)) for e, c in zip(estimators, colours, strict=True)}
    return {
        e: (PALETTE[i % len(PALETTE)], MARKERS[(i + i // len(PALETTE)) % len(MARKERS)])
        for i, e in enumerate(estimators)
    }


def grey(index: int) -> str:
    return GREYS[index % len(GREYS)]


def apply() -> None:
    """The shared rcParams: small fonts for a paper column, light grid, no top/right spines."""
    plt.rcParams.update(
        {
            "figure.dpi": 150,
            "savefig.dpi": 200,
            "font.size": 8,
            "axes.titlesize": 8,
            "axes.labelsize": 8,
            "legend.fontsize": 7,
            "xtick.labelsize": 7,
            "ytick.labelsize": 7,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "lines.linewidth": 1.2,
            "lines.markersize": 3.5,
            "legend.frameon": False,
        }
    )


def figure(width: float, height: float) -> Figure:
    """An empty figure in the shared style, its panels laid out by the caller."""
    apply()
    return plt.figure(figsize=(width, height))


def new_figure(ncols: int = 1, nrows: int = 1, width: float | None = None, height: float = 2.4):
    """A figure with ``nrows`` × ``ncols`` panels sized for a paper column (or the full width)."""
    apply()
    width = width or (COLUMN_WIDTH if ncols == 1 else FULL_WIDTH)
    return plt.subplots(nrows, ncols, figsize=(width, height * nrows), squeeze=False)


def log_ticks(ax, ticks, base: float = 10) -> None:
    """A log x axis ticked at ``ticks`` alone, written plainly (64, not 2⁶), no minor ticks."""
    ax.set_xscale("log", base=base)
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()


def legend_entries(axes) -> dict[str, object]:
    """``{label: handle}``: the first handle of each label over ``axes``, in drawing order."""
    entries: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    return entries


def with_legend_row(ncols: int, nrows: int, height: float, ratio: float):
    """``new_figure`` with ``nrows`` × ``ncols`` panels and under them a strip, ``ratio`` of a
    panel's height, for the legend: (figure, panel axes, legend axis)."""
    fig, grid = new_figure(ncols=ncols, nrows=nrows + 1, height=height)
    spec = grid[0, 0].get_gridspec()
    spec.set_height_ratios([1.0] * nrows + [ratio])
    for ax in grid[-1]:
        ax.remove()
    legend_ax = fig.add_subplot(spec[-1, :])
    legend_ax.axis("off")
    return fig, grid[:-1], legend_ax


def se_band(ax, x, rows, **line) -> None:
    """The values of ``rows`` over ``x`` as a line, shaded ±1 standard error in its colour."""
    y, se = rows["value"].to_numpy(float), rows["stderr"].fillna(0.0).to_numpy(float)
    ax.fill_between(x, y - se, y + se, color=line["color"], alpha=0.25, linewidth=0)
    ax.plot(x, y, **line)


def twin(ax):
    """A right-hand y axis on ``ax``, its spine shown, without a second grid."""
    right = ax.twinx()
    right.spines["right"].set_visible(True)
    right.grid(False)
    return right


def handle(estimator: str, label: str):
    """A legend entry in the estimator's colour and marker."""
    return Line2D([], [], color=colour(estimator), marker=marker(estimator), label=label)


def theory_handle(text: str = "closed form (theory)"):
    """A legend entry for the dashed closed-form curves."""
    return Line2D([], [], color="0.3", label=text, **THEORY_LINE)


def figure_paths(out_dir: Path, figure_id: str) -> list[Path]:
    """The files :func:`save` writes: ``<out_dir>/<figure_id>.png`` and ``.pdf``."""
    return [out_dir / f"{figure_id}.{ext}" for ext in ("png", "pdf")]


def literal_unparsable(fig: Figure) -> None:
    """Show as written every text of ``fig`` that looks like mathtext and does not parse: a name
    from the results (an estimator, a data set: ``$\\sqrt{$``) drawn, never a failed figure."""
    from matplotlib import cbook
    from matplotlib.mathtext import MathTextParser
    from matplotlib.text import Text

    parser = MathTextParser("path")
    for text in fig.findobj(Text):
        if not text.get_parse_math():
            continue
        # line by line, as matplotlib lays a text out (a newline is no glyph of mathtext)
        lines = [line for line in text.get_text().split("\n") if cbook.is_math_text(line)]
        try:
            for line in lines:
                parser.parse(line, dpi=72)
        except ValueError:
            text.set_parse_math(False)


def save(fig: Figure, out_dir: Path, figure_id: str) -> list[Path]:
    """Write ``<out_dir>/<figure_id>.png`` and ``.pdf`` atomically, signed as rfbench's
    (:data:`rfbench.present.outputs.SOFTWARE`: a later run replaces them, never a file of the
    user's); close the figure."""
    from rfbench.present.outputs import SOFTWARE, check_file

    paths = figure_paths(out_dir, figure_id)
    for path in paths:
        check_file(path)
    literal_unparsable(fig)
    fig.tight_layout()
    for path in paths:
        fmt = path.suffix[1:]
        # No creation date in the PDF: the same results give byte-identical files.
        meta = (
            {"CreationDate": None, "Creator": SOFTWARE} if fmt == "pdf" else {"Software": SOFTWARE}
        )
        atomic_write(
            path, lambda tmp, fmt=fmt, meta=meta: fig.savefig(tmp, format=fmt, metadata=meta)
        )
    plt.close(fig)
    return paths
