"""rfbench: a benchmarking suite for random-feature kernel approximation.

The exit statuses of the ``rfbench`` command are declared here, outside every package and with no
imports, so the console entry reads them before anything heavy is loaded.
"""

__version__ = "0.1.0"

#: a bug in rfbench: a log file with the traceback (rfbench.cli.errors)
INTERNAL_EXIT = 1
#: a user error: one line on stderr (rfbench.cli.errors)
USER_EXIT = 2
#: interrupted by Ctrl-C (rfbench.entry)
INTERRUPTED_EXIT = 130
