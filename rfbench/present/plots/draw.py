"""Drawing the registered figures from a results folder, saying per figure what could not be
drawn and why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rfbench.present.plots.registry import FigureSpec, list_figures


@dataclass(frozen=True)
class Outcome:
    id: str
    paths: tuple[Path, ...] = ()
    problem: str = ""
    #: inputs of a partial figure that are not in the results (it was drawn without them)
    missing: tuple[str, ...] = ()
    #: rows left out because their value is not finite (±inf: no axis shows it)
    nonfinite: int = 0
    #: the bug that stopped this figure (:class:`FigureFailed`), told once the others are drawn
    error: Exception | None = field(default=None, compare=False)


class FigureFailed(Exception):
    """Drawing one figure raised (a bug): the other figures are still drawn, then the command
    fails with this (its cause's traceback in the log)."""


def finite_rows(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without the rows whose value is ±inf (a figure's axis cannot show them)."""
    keep = ~np.isinf(df["value"].to_numpy(dtype=float, na_value=np.nan))
    return df if keep.all() else df[keep].reset_index(drop=True)


def read_inputs(spec: FigureSpec, results_dir: Path) -> tuple[dict[str, pd.DataFrame], str, int]:
    """:func:`load_inputs`, and how many rows were left out for a value that is not finite."""
    from rfbench.compute.results import find_result, load_results

    found = {name: find_result(results_dir, name) for name in spec.needs}
    missing = [name for name, path in found.items() if path is None]
    if missing and (not spec.partial or len(missing) == len(found)):
        return {}, f"missing results: {', '.join(missing)}", 0
    read = {name: load_results(path) for name, path in found.items() if path is not None}
    frames = {name: finite_rows(df) for name, df in read.items()}
    dropped = sum(len(read[name]) - len(df) for name, df in frames.items())
    empty = [name for name, df in frames.items() if df.empty]
    if empty and (not spec.partial or len(empty) == len(frames)):
        return {}, f"empty results: {', '.join(empty)}", dropped
    return {name: df for name, df in frames.items() if not df.empty}, "", dropped


def load_inputs(spec: FigureSpec, results_dir: Path) -> tuple[dict[str, pd.DataFrame], str]:
    """The result tables a figure reads (their rows of finite value: :func:`finite_rows`), or
    ({}, the reason they are not all there); a partial figure's tables that are there (or
    ({}, why) when none is)."""
    frames, problem, _ = read_inputs(spec, results_dir)
    return frames, problem


def draw_figure(spec: FigureSpec, results_dir: Path, out_dir: Path) -> Outcome:
    """Draw one figure, or say which results it lacks."""
    import matplotlib.pyplot as plt

    from rfbench.compute.checks import UserError
    from rfbench.present.plots.style import save

    frames, problem, nonfinite = read_inputs(spec, Path(results_dir))
    if problem:
        return Outcome(spec.id, problem=problem, nonfinite=nonfinite)
    try:
        fig = spec.draw(frames)
    except UserError:
        raise
    except Exception as exc:  # a bug in one figure: the others are drawn all the same
        plt.close("all")
        error = FigureFailed(f"figure {spec.id} could not be drawn: {type(exc).__name__}: {exc}")
        error.__cause__ = exc
        return Outcome(spec.id, problem=f"not drawn: {type(exc).__name__} (a bug)", error=error)
    missing = tuple(name for name in spec.needs if name not in frames)
    if not any(ax.has_data() for ax in fig.axes):
        plt.close(fig)
        return Outcome(spec.id, problem="the figure has no data", nonfinite=nonfinite)
    paths = tuple(save(fig, out_dir, spec.id))
    small = [p.name for p in paths if p.stat().st_size < 1000]
    problem = f"empty file(s): {', '.join(small)}" if small else ""
    return Outcome(spec.id, paths, problem, missing, nonfinite)


def draw_all(results_dir: Path, out_dir: Path, only: Sequence[str] = ()) -> list[Outcome]:
    """Every registered figure (or those in ``only``) from ``results_dir`` into ``out_dir``;
    a file in the way that rfbench did not draw (:func:`rfbench.present.outputs.check_file`) is
    refused before any is drawn."""
    from rfbench.present.outputs import check_file, check_folder
    from rfbench.present.plots.style import figure_paths

    specs = [s for s in list_figures() if not only or s.id in only]
    check_folder(Path(out_dir))  # every file in the way refused before any figure is drawn
    for spec in specs:
        for path in figure_paths(Path(out_dir), spec.id):
            check_file(path)
    return [draw_figure(spec, Path(results_dir), Path(out_dir)) for spec in specs]
