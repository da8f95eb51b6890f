"""The command line starts at once: listing commands imports no experiment (rfbench.cli.app)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rfbench.cli.app import COMMANDS, builtin_experiments, experiment_texts

PROBE = """
import sys
from rfbench.cli.app import cli
status = cli({args!r})
heavy = sorted(m for m in ("pandas", "scipy", "rfbench.compute.experiments",
"rfbench.compute.features")
               if m in sys.modules)
print("HEAVY", heavy, status)
"""


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["list", "experiments"]])
def test_listing_imports_nothing_heavy(args) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True, timeout=60
    )
    last = done.stdout.strip().splitlines()[-1]
    assert last == "HEAVY [] 0", done.stdout + done.stderr


def test_the_source_listing_equals_the_registry() -> None:
    """The names and helps read from the sources are the registered experiments' own."""
    from rfbench.compute.experiments import list_experiments

    registered = {
        e.name: (e.short_description(), e.description)
        for e in list_experiments()
        if type(e).__module__.startswith("rfbench.")  # not those other test modules register
    }
    assert experiment_texts() == registered
    assert set(builtin_experiments()) == set(registered)


def test_every_command_is_built_when_invoked() -> None:
    from typer.main import get_command

    from rfbench.cli.app import app

    group = get_command(app)
    names = group.list_commands(None)
    assert set(COMMANDS) | set(builtin_experiments()) <= set(names)
    for name in names:
        command = group.get_command(None, name)
        assert command is not None and command.name == name
        assert command.get_short_help_str() or name in builtin_experiments()
