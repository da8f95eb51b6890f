"""Config, figure and reference data name each other consistently (the config's ``name`` joins
its result file, its figure and its reference entries)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from rfbench.present import reference
from rfbench.present.plots import list_figures

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs").rglob("*.toml"))


def _configs() -> dict[str, dict]:
    return {c["name"]: c for c in (tomllib.loads(p.read_text()) for p in CONFIGS)}


def test_every_config_is_drawn_or_judged() -> None:
    """A paper config feeds a registered figure (that reads it) or the report's entries for its
    table; a config with ``figure = ""`` is an example, drawn by the generic plot of its run."""
    figures = {spec.id: spec for spec in list_figures()}
    judged = {e.figure for e in reference.load() if getattr(e, "figure", "")}
    for name, config in _configs().items():
        figure = config.get("figure", "")
        if not figure:
            assert name not in judged, f"{name}: the report judges it; give it its figure id"
            continue
        drawn = figure in figures and name in figures[figure].needs
        assert drawn or figure in judged, (
            f"config {name}: figure {figure!r} is neither drawn nor judged"
        )


def test_every_figure_reads_existing_configs() -> None:
    names = set(_configs())
    for spec in list_figures():
        missing = [n for n in spec.needs if n not in names]
        assert not missing, f"figure {spec.id} reads {missing}, which no config writes"
