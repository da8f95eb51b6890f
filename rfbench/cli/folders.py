"""What ``figures``, ``report`` and ``site`` say about the results folder they read."""

from __future__ import annotations

from pathlib import Path

import typer


def warn_mixed_profiles(folder: str | Path) -> dict[str, list[Path]]:
    """Say loudly (stderr) when a results folder mixes profiles; return the files per profile.

    A quick run's numbers beside paper-profile ones would silently change figures and verdicts:
    every file's profile is named so the reader knows what was mixed.
    """
    from rfbench.results import load_provenance, result_paths

    by_profile: dict[str, list[Path]] = {}
    for path in result_paths(folder):
        try:
            profile = load_provenance(path).get("config", {}).get("profile") or "default"
        except ValueError:
            continue  # unreadable files are reported by the commands themselves
        by_profile.setdefault(str(profile), []).append(path)
    if len(by_profile) > 1:
        parts = "; ".join(
            f"{profile}: {', '.join(p.relative_to(folder).as_posix() for p in paths)}"
            for profile, paths in sorted(by_profile.items())
        )
        typer.secho(
            f"rfbench: warning: {folder} mixes result files of several profiles ({parts})",
            err=True,
            fg="yellow",
        )
    return by_profile
