"""The exit statuses of the ``rfbench`` command (no imports, outside every package: the console
entry reads them before anything heavy is loaded)."""

#: a bug in rfbench: a log file with the traceback (rfbench.cli.errors)
INTERNAL_EXIT = 1
#: a user error: one line on stderr (rfbench.cli.errors)
USER_EXIT = 2
#: interrupted by Ctrl-C (rfbench.entry)
INTERRUPTED_EXIT = 130
