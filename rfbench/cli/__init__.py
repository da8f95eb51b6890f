"""The ``rfbench`` command line (docs/architecture.md#cli): thin — parse, validate, call.

The app and :func:`~rfbench.cli.app.cli` are in :mod:`rfbench.cli.app`; how errors end (exit
status 2 for user errors, 1 for bugs) in :mod:`rfbench.cli.errors`; one subcommand per registered
experiment is generated from its parameters (:mod:`rfbench.cli.experiments`).
"""
