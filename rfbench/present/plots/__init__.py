"""One function per paper figure, reading only parquet results (docs/architecture.md#flow); the
names below are the plugin API (docs/extending.md#figure). Nothing here computes an estimate."""

from rfbench.present.plots.draw import draw_all, draw_figure
from rfbench.present.plots.registry import FIGURES, FigureSpec, list_figures, register_figure

__all__ = ["FIGURES", "FigureSpec", "draw_all", "draw_figure", "list_figures", "register_figure"]
