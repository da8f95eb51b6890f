"""The experiment runner (docs/architecture.md#flow, #cli, #result-schema, #seeding).

``run(experiment, config, RunOptions(...))`` writes one result file; ``load_config(path, profile)``
reads a TOML config file (:mod:`rfbench.compute.runner.config`). ``run`` is ``prepare``
(:mod:`rfbench.compute.runner.preflight`: every check that can refuse the run) then
``execute_plan``; ``rfbench reproduce`` prepares every config before it runs the first.
"""

from __future__ import annotations

from rfbench.compute.runner.backends import BACKENDS, JobFailed, execute_job
from rfbench.compute.runner.cache import JobCache, cache_dir
from rfbench.compute.runner.config import ConfigFile, load_config, read_config_file, resolve_file
from rfbench.compute.runner.core import expand_grid, run
from rfbench.compute.runner.options import RunOptions
from rfbench.compute.runner.outputs import default_out

__all__ = [
    "BACKENDS",
    "ConfigFile",
    "JobCache",
    "JobFailed",
    "RunOptions",
    "cache_dir",
    "default_out",
    "execute_job",
    "expand_grid",
    "load_config",
    "read_config_file",
    "resolve_file",
    "run",
]
