"""``--data PATH`` and ``--target COLUMN``: an experiment on the user's own file (README "Your own
data").

Every experiment with a ``data`` config key gets ``--data``; ``--target``, the label column of a
table, only those whose data is one (classify). The path becomes a pinned reference
``PATH[#TARGET]@SHA256PREFIX`` (rfbench.compute.datasets.user.reference), so the results' provenance
names the file and its content, and the job cache recomputes when the file changes.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rfbench.cli.errors import UserError
from rfbench.cli.params import flags, option
from rfbench.compute.datasets import user
from rfbench.compute.experiments.base import Experiment

KEYS = ("user_data", "user_target")
PANEL = "Your own data"
_HELP = {
    "points": "your own points instead of the built-in inputs: .npy/.npz (X, or Q and K) or "
    ".csv/.parquet numeric columns; its path and sha256 are recorded with the results",
    "table": "your own table (.csv/.parquet) instead of the data sets: the --target column holds "
    "the labels, the others numeric features; its path and sha256 are recorded",
}


def data_options(experiment: Experiment) -> list[inspect.Parameter]:
    """``--data PATH`` for an experiment with ``data``, and ``--target COLUMN`` where the data is a
    labelled table (:attr:`~rfbench.compute.experiments.base.DataFile.table_for`): a command
    shows only the options it takes."""
    params = experiment.parameters()
    if "data" not in params:
        return []
    file = experiment.data_file
    table = bool(file.table_for)
    text = params["data"].help if file.own_help else _HELP["table" if table else "points"]
    data = option("user_data", ("--data",), str | None, text, metavar="PATH", panel=PANEL)
    if not table:
        return [data]
    target = option("user_target", ("--target",), str | None, "the label column of --data",
                    metavar="COLUMN", panel=PANEL)  # fmt: skip
    return [data, target]


def apply(
    experiment: Experiment,
    params: Mapping[str, Any],
    user_data: str | None = None,
    user_target: str | None = None,
) -> dict[str, Any]:
    """``params`` with ``data`` set to the pinned reference of ``user_data`` (plus what the
    experiment needs with it); a :class:`UserError` for a combination that cannot work."""
    file = experiment.data_file
    if user_target and not user_data:
        raise UserError("--target names a column of --data; give --data PATH too")
    if not user_data:
        return dict(params)
    user_data, user_target, sha = _split(user_data, user_target)
    replaced = file.table_for
    if user_target and not replaced:
        raise UserError(
            f"--target applies to a labelled table; {experiment.name} uses every column of --data"
        )
    if replaced in params:
        flag = flags(replaced, experiment.parameters()[replaced].default)[0]
        raise UserError(f"--data replaces {flag}: give one of them")
    for key, value in file.sets.items():
        if key in params and params[key] != value:
            raise UserError(f"--data needs --{key} {value} (got {params[key]!r})")
    cleared = {replaced: []} if replaced else {}  # not the profile's data sets (provenance)
    named = (
        f"{user_data}#{user_target}" if user_target else user_data
    )  # a given sha: checked on load
    return {
        **file.defaults,
        **file.sets,
        **params,
        **cleared,
        "data": f"{named}@{sha}" if sha else user.reference(user_data, user_target or ""),
    }


def _split(user_data: str, user_target: str | None) -> tuple[str, str | None, str]:
    """``--data`` as (path, target, sha prefix): a path that is not a file but a reference
    ``PATH#TARGET[@SHA]`` (as in a config's ``data``, or a result's provenance) is split; a
    file whose path holds a '#' cannot be told from one."""
    if Path(user_data).exists():
        if "#" in user_data:
            raise UserError(
                f"data file {user_data}: a '#' in its path reads as PATH#TARGET; rename the file "
                "or the folder that holds it"
            )
        return user_data, user_target, ""
    if not user.is_reference(user_data):
        return user_data, user_target, ""
    path, target, sha = user.parse(user_data)
    if target and user_target and target != user_target:
        raise UserError(
            f"--data {user_data} names the column {target!r}, --target {user_target!r}: give one"
        )
    return str(path), target or user_target, sha
