"""One function per paper figure, reading only parquet results (docs/architecture.md#flow).

Figure functions register themselves with :func:`~rfbench.present.plots.registry.register_figure`
(:mod:`rfbench.present.plots.registry`); :func:`~rfbench.present.plots.draw.draw_all`
(:mod:`rfbench.present.plots.draw`) draws every figure whose inputs exist and says, per figure, what
it could not draw and why. Nothing here computes an estimate. The names below are the plugin API
(docs/extending.md#figure), re-exported from those modules.
"""

from rfbench.present.plots.draw import draw_all, draw_figure
from rfbench.present.plots.registry import FIGURES, FigureSpec, list_figures, register_figure

__all__ = ["FIGURES", "FigureSpec", "draw_all", "draw_figure", "list_figures", "register_figure"]
