"""The checks of a run's output file and job cache folder, and the one-line errors of writing
them (a full disk, a file-size limit: docs/architecture.md#errors).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rfbench.compute.experiments.base import ConfigError
from rfbench.compute.results import result_path

#: operating-system errors of writing that are the machine's state, not a bug
WRITE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM}
)
_HINTS = {
    errno.ENOSPC: "free some space",
    errno.EDQUOT: "free some space",
    errno.EFBIG: "the file-size limit (ulimit -f) is too small",
}


class OutputClash(ConfigError):
    """The output holds a result of another profile or config (any resolved parameter differs:
    a causal mask, a data file, a model); ``--replace`` overwrites it."""


def check_output_path(out: Path, option: str = "--out") -> None:
    """Refuse an output path rfbench cannot or must not write (before any job)."""
    if out.suffix != ".parquet":
        raise ConfigError.bad_value(option.lstrip("-"), str(out), "a file name ending in .parquet")
    if out.is_symlink():
        raise ConfigError(f"output {out} is a symbolic link; rfbench does not write through links")
    if out.is_dir():
        raise ConfigError(f"output {out} is a directory; give a file name ending in .parquet")


def check_replaceable(
    out: Path, experiment: str, config: Mapping[str, Any], replace: bool, option: str
) -> Mapping[str, Any] | None:
    """Refuse to replace ``out`` unless it is an rfbench result file of ``experiment`` — and,
    unless ``replace``, one written by the same profile, config name and resolved parameters as
    ``config`` (:func:`differing`: rerunning a command replaces its own result; a run of another
    setting never silently replaces it).

    A run writes its file atomically over the old one; this keeps it from ever replacing a user's
    own file (a parquet file of theirs, or another experiment's result) by mistake, and a quick
    run from replacing a paper-profile result. ``option`` is the command's option that chooses the
    output (``--out``; ``reproduce``: ``--out-dir``), for the message.

    Returns
    -------
    mapping or None
        The replaced file's config when ``replace`` lets this run overwrite a file of another
        profile or config (its companions, such as the figure drawn beside it, are stale), else
        None.
    """
    check_output_path(out, option)
    if not out.exists():
        return None
    from rfbench.compute.results import load_provenance

    try:
        provenance = load_provenance(out)
    except Exception:
        provenance = {}
    found = provenance.get("experiment")
    if found is None:
        raise ConfigError(
            f"output {out} exists and is not an rfbench result file; rfbench never replaces it "
            f"(choose another {option} or move the file)"
        )
    if found != experiment:
        raise ConfigError(
            f"output {out} holds results of experiment {found!r}, not {experiment!r}; "
            f"rfbench does not replace it (choose another {option})"
        )
    old = provenance.get("config", {})
    key = next(iter(differing(old, config)), None)
    if key is None:
        return None
    if replace:
        return old
    raise OutputClash(_clash_message(out, key, old.get(key), config.get(key), option))


def _plain(value: Any) -> Any:
    """A config value as the result file's provenance stores it (JSON: tuples are lists), a
    user's data file as its path and target: the same file edited since is the same setting
    (its pinned digest differs; the job cache computes it again)."""
    from rfbench.compute.datasets import user

    value = json.loads(json.dumps(value, default=str, sort_keys=True))
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str) and value and user.is_reference(value):
        path, target, _ = user.parse(value)
        return f"{path}#{target}"
    return value


def differing(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The config keys whose values differ between a result file's config ``old`` and this run's
    ``new``: the profile and name first, then the others in order (a causal mask, another model
    or data file, other estimators or budgets). A key one of them lacks (a parameter added since
    the file was written) is not a difference."""
    keys = ["profile", "name", *(k for k in new if k not in ("profile", "name"))]
    out = []
    for key in keys:
        if key in ("profile", "name"):
            same = old.get(key) == new.get(key)
        else:
            same = key not in old or key not in new or _plain(old[key]) == _plain(new[key])
        if not same:
            out.append(key)
    return out


def _words(value: Any) -> str:
    """A config value in a message: a data file by its name, a list without brackets."""
    if isinstance(value, list | tuple):
        return ",".join(_words(v) for v in value) or "none"
    if isinstance(value, str) and ("/" in value or os.sep in value):
        return Path(value).name.split("@")[0]
    return str(value) if value != "" else "none"


def _tag(key: str, value: Any) -> str:
    """A file-name-safe word for ``key = value`` (``causal-True``, ``data-qkv``)."""
    word = _words(value)
    word = Path(word).stem if key == "data" else word
    word = re.sub(r"[^A-Za-z0-9.,_+-]+", "-", f"{key}-{word}").strip("-")
    return word[:60]


def _clash_message(out: Path, key: str, old: Any, new: Any, option: str) -> str:
    if key == "profile":
        # a profile as the user calls it: "default" when none was given
        tag = new or "default"
        what = f"profile {old or 'default'} results; this run is profile {tag}"
    elif key == "name":
        what = f"the results of config {old!r}; this run is config {new!r}"
        tag = str(new)
    else:
        what = f"results of {key} {_words(old)}; this run has {key} {_words(new)}"
        tag = _tag(key, new)
    if option == "--out-dir":
        elsewhere = f"--out-dir {out.parent.parent / tag}"
    else:
        elsewhere = f"--out {out.with_name(f'{out.stem}-{tag}{out.suffix}')}"
    return f"output {out} holds {what}: add --replace to overwrite it, or keep both: {elsewhere}"


def cannot_write(path: Path, exc: OSError, option: str = "--out") -> ConfigError:
    """The one-line user error of an :class:`OSError` met writing ``path``."""
    reason = exc.strerror or os.strerror(exc.errno or 0)
    hint = _HINTS.get(exc.errno or 0, f"choose another {option}")
    return ConfigError(f"cannot write {path}: {reason} ({hint})")


@contextlib.contextmanager
def writing(path: Path, option: str = "--out") -> Iterator[None]:
    """Turn an environment error of writing ``path`` (disk full, file-size limit, no permission)
    into a one-line user error naming it; pyarrow's errors name no file."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        raise cannot_write(path, exc, option) from exc


#: where runs write by default: a scratch folder, so everyday runs never touch the committed
#: paper results in ``results/`` (``make reproduce`` writes there explicitly)
SCRATCH_ROOT = "runs"


def default_out(experiment: str, name: str, root: str | os.PathLike[str] = SCRATCH_ROOT) -> Path:
    """``runs/<experiment>/<name>.parquet`` (docs/architecture.md#cli), checked to lie inside
    ``root`` (a name or a plugin's experiment name can never point elsewhere)."""
    out = result_path(root, experiment, name)
    inside = Path(root).resolve()
    if out.resolve().parent.parent != inside or out.resolve().parent.name != experiment:
        raise ConfigError(
            f"experiment {experiment!r} with name {name!r} would write outside {root}: "
            "names must be plain file names"
        )
    return out
