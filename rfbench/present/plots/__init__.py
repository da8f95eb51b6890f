"""One function per paper figure, reading only parquet results (docs/architecture.md#flow).

A figure function is registered with the result files it reads (by config name = figure id, found
as ``<results>/<experiment>/<name>.parquet``) and returns a matplotlib Figure::

    @register_figure("hrf-fig2", needs=["hrf-fig2"], title="HRF Fig. 2: ...")
    def hrf_fig2(results: dict[str, pd.DataFrame]) -> Figure: ...

``draw_all(results_dir, out_dir)`` draws every figure whose inputs exist and says, per figure,
what it could not draw and why. Nothing here computes an estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from rfbench.compute.plugins import claim, tracked

FigureFn = Callable[[dict[str, pd.DataFrame]], Figure]


@dataclass(frozen=True)
class FigureSpec:
    id: str
    needs: tuple[str, ...]
    title: str
    draw: FigureFn


FIGURES: dict[str, FigureSpec] = tracked({})


def register_figure(
    figure_id: str, needs: Sequence[str], title: str
) -> Callable[[FigureFn], FigureFn]:
    """Decorator: register a figure function under ``figure_id`` (a taken id is refused)."""

    def deco(fn: FigureFn) -> FigureFn:
        claim(FIGURES, "figure", figure_id, FigureSpec(figure_id, tuple(needs), title, fn), fn)
        return fn

    return deco


def load_builtins() -> None:
    """Import every figure module of this package (registration happens on import)."""
    from rfbench.compute.plugins import import_submodules

    import_submodules(__name__, skip=("style",))


def _load() -> None:
    """The built-in figures, then the plugins (:mod:`rfbench.compute.plugins`)."""
    from rfbench.compute.plugins import load_plugins

    load_builtins()
    load_plugins()


def list_figures() -> list[FigureSpec]:
    _load()
    return list(FIGURES.values())


def find_result(results_dir: Path, name: str) -> Path | None:
    """``<results>/<experiment>/<name>.parquet`` for any experiment folder
    (rfbench.compute.results)."""
    from rfbench.compute.results import find_result as find

    return find(results_dir, name)


@dataclass(frozen=True)
class Outcome:
    id: str
    paths: tuple[Path, ...] = ()
    problem: str = ""


def load_inputs(spec: FigureSpec, results_dir: Path) -> tuple[dict[str, pd.DataFrame], str]:
    """The result tables a figure reads, or ({}, the reason they are not all there)."""
    from rfbench.compute.results import load_results

    found = {name: find_result(results_dir, name) for name in spec.needs}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        return {}, f"missing results: {', '.join(missing)}"
    frames = {name: load_results(path) for name, path in found.items()}
    empty = [name for name, df in frames.items() if df.empty]
    if empty:
        return {}, f"empty results: {', '.join(empty)}"
    return frames, ""


def draw_figure(spec: FigureSpec, results_dir: Path, out_dir: Path) -> Outcome:
    """Draw one figure, or say which results it lacks."""
    from rfbench.present.plots.style import save

    frames, problem = load_inputs(spec, Path(results_dir))
    if problem:
        return Outcome(spec.id, problem=problem)
    fig = spec.draw(frames)
    if not any(ax.has_data() for ax in fig.axes):
        import matplotlib.pyplot as plt

        plt.close(fig)
        return Outcome(spec.id, problem="the figure has no data")
    paths = tuple(save(fig, out_dir, spec.id))
    small = [p.name for p in paths if p.stat().st_size < 1000]
    return Outcome(spec.id, paths, f"empty file(s): {', '.join(small)}" if small else "")


def draw_all(results_dir: Path, out_dir: Path, only: Sequence[str] = ()) -> list[Outcome]:
    """Every registered figure (or those in ``only``) from ``results_dir`` into ``out_dir``."""
    specs = [s for s in list_figures() if not only or s.id in only]
    return [draw_figure(spec, Path(results_dir), Path(out_dir)) for spec in specs]
