"""The computing layer: estimators, data sets, models, experiments and the runner.

Everything that can change a result row lives in this folder, and the job cache keys on all of it
(:mod:`rfbench.compute.runner.digest`). Nothing here imports the presentation
(:mod:`rfbench.present`) or the command line (:mod:`rfbench.cli`); the import contracts in
``pyproject.toml`` check it (docs/architecture.md#layout).
"""
