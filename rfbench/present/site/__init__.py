"""``rfbench site``: a static HTML site of a results folder that works from ``file://`` (Plotly's
JavaScript copied into ``assets/``); see docs/architecture.md and :mod:`.build`."""

from rfbench.present.site.build import build_site

__all__ = ["build_site"]
