"""What ``figures``, ``report`` and ``site`` say about the results folder they read."""

from __future__ import annotations

from pathlib import Path

import typer

from rfbench.compute.checks import UserError

#: the ``--results`` option of ``figures``, ``report`` and ``site``
RESULTS = typer.Option("results", help="Results folder: <results>/<experiment>/*.parquet.")


def checked_results(results: str) -> Path:
    """The results folder, refused if absent or holding an unreadable result file; a mix of
    profiles is warned about (:func:`warn_mixed_profiles`)."""
    from rfbench.compute.results import check_readable

    if not Path(results).is_dir():
        raise UserError(f"results folder {results!r} does not exist")
    check_readable(results)
    warn_mixed_profiles(results)
    return Path(results)


def warn_mixed_profiles(folder: str | Path) -> dict[str, list[Path]]:
    """Say loudly (stderr) when a results folder mixes profiles; return the files per profile.

    A quick run's numbers beside paper-profile ones would silently change figures and verdicts:
    every file's profile is named so the reader knows what was mixed.
    """
    from rfbench.compute.results import load_provenance, result_paths

    by_profile: dict[str, list[Path]] = {}
    for path in result_paths(folder):
        try:
            profile = load_provenance(path).get("config", {}).get("profile") or "default"
        except ValueError:
            continue  # unreadable files are reported by the commands themselves
        by_profile.setdefault(str(profile), []).append(path)
    if len(by_profile) > 1:
        lines = [
            f"rfbench: warning: {folder} mixes result files of {len(by_profile)} profiles "
            "(figures and verdicts would mix their numbers):"
        ]
        for profile, paths in sorted(by_profile.items()):
            names = [p.relative_to(folder).with_suffix("").as_posix() for p in paths]
            lines.append(f"  {profile}: {len(paths)} file(s) ({_some(names)})")
        typer.secho("\n".join(lines), err=True, fg="yellow")
    return by_profile


#: how many characters of file names a line of the warning shows before "and N more"
NAMES_WIDTH = 60


def _some(names: list[str]) -> str:
    """As many of ``names`` as fit in :data:`NAMES_WIDTH` characters, then ``and N more``."""
    shown: list[str] = []
    for name in names:
        if shown and len(", ".join([*shown, name])) > NAMES_WIDTH:
            return f"{', '.join(shown)} and {len(names) - len(shown)} more"
        shown.append(name)
    return ", ".join(shown)
