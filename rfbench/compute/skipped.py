"""The configs that ``reproduce`` skipped because their data is not here (offline, say).

``reproduce`` runs every config it can and records the others in ``<out dir>/skipped-data.json``;
``figures --strict`` reads it, so a figure whose data set is missing is reported as skipped (with
the command that fetches the data) instead of failing the whole run.
"""

from __future__ import annotations

import json
from pathlib import Path

from rfbench.compute.checks import UserError
from rfbench.compute.results import atomic_write

SKIPPED_FILE = "skipped-data.json"


def record_skipped(out_dir: Path, skipped: list[dict[str, str]]) -> None:
    """Write (or clear) the record of configs skipped for missing data in ``out_dir``; a file of
    that name rfbench did not write (or a link) is never replaced or removed."""
    path = out_dir / SKIPPED_FILE
    foreign = path.is_symlink() or (path.exists() and not _ours(path))
    if not skipped:
        if path.is_file() and not foreign:
            path.unlink()
        return
    if foreign:
        raise UserError(
            f"cannot record the configs skipped for missing data: {path} exists and rfbench did "
            "not write it; rfbench never replaces it (move it, then run again)"
        )
    text = json.dumps({"tool": "rfbench", "skipped": skipped}, indent=2, sort_keys=True)
    atomic_write(path, lambda tmp: tmp.write_text(text + "\n", encoding="utf-8"))


def _ours(path: Path) -> bool:
    """Whether ``path`` is a record rfbench wrote (JSON whose ``tool`` is rfbench)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("tool") == "rfbench"


def _records(results: Path) -> list[dict]:
    """The skipped configs recorded in ``results`` (empty if none or not rfbench's record)."""
    path = Path(results) / SKIPPED_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(record, dict) or record.get("tool") != "rfbench":
        return []
    return [s for s in record.get("skipped", []) if isinstance(s, dict)]


def skipped_names(results: Path) -> dict[str, str]:
    """Result name -> missing data set, from the record in ``results`` (empty if none)."""
    return {s["name"]: s["dataset"] for s in _records(results)}


def skipped_fixes(results: Path) -> dict[str, str]:
    """Missing data set (or model) -> the command that gets it, from the record in ``results``."""
    return {
        s["dataset"]: s.get("fix") or f"rfbench data fetch {s['dataset']}"
        for s in _records(results)
    }
