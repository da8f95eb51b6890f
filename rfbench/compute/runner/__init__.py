"""The experiment runner (docs/architecture.md#flow, #cli, #result-schema, #seeding): config files,
grids of jobs, backends, job cache.

``run(experiment, config, seed=0, out=None, workers=None, backend="processes", force=False,
quiet=False, command_line=None, scheduler=None) -> Path`` writes one result file;
``load_config(path, profile)`` reads a TOML config file (shape documented in
:mod:`rfbench.compute.runner.config`). ``run`` is ``prepare``
(:mod:`rfbench.compute.runner.preflight`: every check that can refuse the run, before its first job,
and the output's and cache's locks) then ``execute_plan``; ``rfbench reproduce`` prepares every
config before it runs the first.
"""

from __future__ import annotations

from rfbench.compute.runner.backends import BACKENDS, JobFailed, execute_job
from rfbench.compute.runner.cache import JobCache, cache_dir
from rfbench.compute.runner.config import ConfigFile, load_config, read_config_file, resolve_file
from rfbench.compute.runner.core import expand_grid, run
from rfbench.compute.runner.outputs import default_out

__all__ = [
    "BACKENDS",
    "ConfigFile",
    "JobCache",
    "JobFailed",
    "cache_dir",
    "default_out",
    "execute_job",
    "expand_grid",
    "load_config",
    "read_config_file",
    "resolve_file",
    "run",
]
