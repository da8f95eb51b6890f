"""The ``similarity`` experiment: its registered class in ``experiment``, helpers beside it."""
