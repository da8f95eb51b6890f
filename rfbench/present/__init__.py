"""The presentation layer: figures, the report, the site, ``rfbench compare`` and each
experiment's presentation (the table printed after a run, the view of its chart).

It reads result files, their metadata and the papers' published numbers
(:mod:`rfbench.present.reference`),
never the estimator library or the experiments, so a figure or the report can be redrawn from
committed results without computing anything, and editing anything here recomputes no cached job
(docs/architecture.md#layout).
"""
