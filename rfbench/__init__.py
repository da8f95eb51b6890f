"""rfbench: a benchmarking suite for random-feature kernel approximation."""

__version__ = "0.1.0"
