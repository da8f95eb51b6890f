"""The computing layer: estimators, data sets, models, experiments and the runner.

Everything that can change a result row lives in this folder, and the job cache keys on all of it
(:mod:`rfbench.compute.runner.digest`). Nothing here imports, or names, the layers above it (the
presentation, the command line, the public module); the import contracts in ``pyproject.toml``
check it (docs/architecture.md#layout).
"""
