"""Command lines run in a child process whose address space is capped (RLIMIT_AS, ``ulimit -v``).

The cap is a little above what the child maps after its imports, so a command that tried to
allocate a large array would fail there with a MemoryError (exit 1): a refusal with exit 2 proves
that nothing large was allocated before it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: address space the capped child may map beyond its imports
HEADROOM = 768 * 2**20

_CHILD = """
import json, resource, sys
from typer.testing import CliRunner
from rfbench.cli.app import app
from rfbench.compute.memlimits import _proc_bytes
cases, headroom = json.loads(sys.argv[1]), int(sys.argv[2])
limit = _proc_bytes("/proc/self/status", "VmSize") + headroom
resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
results = []
for args in cases:
    done = CliRunner().invoke(app, args)
    results.append([done.exit_code, done.output])
print(json.dumps(results))
"""


def run_capped(cases: list[list[str]], cwd: Path) -> list[tuple[int, list[str]]]:
    """Exit code and non-empty output lines of each command line of ``cases``, all run in one
    child process under RLIMIT_AS (rfbench's arguments, without the ``rfbench``)."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(cases), str(HEADROOM)],
        capture_output=True, text=True, timeout=600, cwd=cwd, env={**os.environ},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    return [(code, [line for line in out.splitlines() if line.strip()]) for code, out in results]
