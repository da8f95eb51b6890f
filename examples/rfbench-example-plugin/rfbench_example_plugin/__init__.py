"""An example rfbench plugin (see gerf_fixed.py and the README)."""
