"""The ``theory`` experiment: its registered class in ``experiment``, helpers beside it."""
