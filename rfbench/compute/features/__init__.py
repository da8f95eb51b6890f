"""The estimator library: feature functions, couplings, hybrids and their theory (no I/O)."""
