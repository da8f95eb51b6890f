"""Colours and markers for the estimators of one chart: one colour each, never recycled."""

from __future__ import annotations

from collections.abc import Sequence

from rfbench.compute.text import family_of, weights_of
from rfbench.present.plots import style

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
    """``{estimator: (colour, marker)}``: the paper figures' colours (by family, else by coupling;
    :mod:`~rfbench.present.plots.style`) when they tell the estimators apart, else one of the 24
    of :data:`PALETTE` each, with a marker of its own among neighbours (and another marker in
    each further round of colours)."""
    known = {
        style.colour: lambda e: family_of(e) in style.FAMILY_COLOURS,
        style.coupling_colour: lambda e: weights_of(e) in style.COUPLING_COLOURS,
    }
    for choose, fixed in known.items():
        colours = [choose(e) for e in estimators]
        if (
            all(map(fixed, estimators))
            and len(set(colours)) == len(colours)
            and ("#000000" not in colours)
        ):
            return {e: (c, style.marker(e)) for e, c in zip(estimators, colours, strict=True)}
    return {
        e: (PALETTE[i % len(PALETTE)], MARKERS[(i + i // len(PALETTE)) % len(MARKERS)])
        for i, e in enumerate(estimators)
    }


def grey(index: int) -> str:
    return GREYS[index % len(GREYS)]
