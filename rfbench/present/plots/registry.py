"""The figure registry: figure functions by id, with the result files each reads (how to add
one: docs/extending.md#figure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd
from matplotlib.figure import Figure

from rfbench.compute.plugins import BuiltinsThenPlugins, claim, tracked

FigureFn = Callable[[dict[str, pd.DataFrame]], Figure]
PACKAGE = "rfbench.present.plots"


@dataclass(frozen=True)
class FigureSpec:
    id: str
    needs: tuple[str, ...]
    title: str
    draw: FigureFn
    partial: bool = False


FIGURES: dict[str, FigureSpec] = tracked({})


def register_figure(
    figure_id: str, needs: Sequence[str] = (), *, title: str, partial: bool = False
) -> Callable[[FigureFn], FigureFn]:
    """Decorator: register a figure function under ``figure_id`` (a taken id is refused) that
    reads ``needs`` (default: the result file named ``figure_id``); ``partial``: drawn from
    whichever of ``needs`` exist (the function gets only those)."""

    def deco(fn: FigureFn) -> FigureFn:
        spec = FigureSpec(figure_id, tuple(needs) or (figure_id,), title, fn, partial)
        claim(FIGURES, "figure", figure_id, spec, fn)
        return fn

    return deco


def load_builtins() -> None:
    """Import every figure module of this package (registration happens on import)."""
    from rfbench.compute.plugins import import_submodules

    import_submodules(PACKAGE, skip=("style", "registry", "draw"))


#: the built-in figures, then the plugins, on first use (rfbench.compute.plugins)
_load = BuiltinsThenPlugins(load_builtins)


def list_figures() -> list[FigureSpec]:
    _load()
    return list(FIGURES.values())
