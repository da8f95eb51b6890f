"""The ``rfbench`` command line (docs/architecture.md#cli): thin — parse, validate, call
(the app: :mod:`rfbench.cli.app`; how errors end: :mod:`rfbench.cli.errors`).
"""
