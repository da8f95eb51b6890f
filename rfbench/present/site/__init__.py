"""``rfbench site``: a static, self-contained HTML site of a results folder.

Reads only what the run left behind — the parquet files (rows and provenance), the drawn figures
and the report's verdicts — and writes pages that work from ``file://`` with no server: an index
of experiments and figures, a page per figure (its picture, an interactive chart, its config,
provenance and numbers) and a page of the report's verdicts, filterable by paper, kind and
verdict. Interactive charts are Plotly (the library ships its JavaScript, copied once into
``assets/``, so no page needs a network). See docs/architecture.md.
"""

from rfbench.present.site.build import build_site

__all__ = ["build_site"]
