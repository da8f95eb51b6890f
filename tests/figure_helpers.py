"""Shared by the plot tests: a figure's input tables (loaded as the plots load them) and drawing."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from rfbench.present.plots.draw import load_inputs
from rfbench.present.plots.registry import FIGURES, list_figures


def inputs(results_dir: Path, figure_id: str) -> dict[str, pd.DataFrame]:
    list_figures()
    frames, problem = load_inputs(FIGURES[figure_id], Path(results_dir))
    assert not problem, problem
    return frames


def frame(results_dir: Path, figure_id: str) -> pd.DataFrame:
    """The result table named after the figure."""
    return inputs(results_dir, figure_id)[figure_id]


def draw(results_dir: Path, figure_id: str) -> Figure:
    """The figure drawn from the results (not saved)."""
    frames = inputs(results_dir, figure_id)  # loads the registry first
    return FIGURES[figure_id].draw(frames)
