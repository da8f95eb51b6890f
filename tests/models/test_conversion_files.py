"""A packaged model's conversion (issue 44 item 6): a killed conversion's temporary files are
removed by the next one (rfbench's own only), the converted files get the umask's mode (not
safetensors' 0600), and a folder where a converted file belongs is one ModelError line."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from rfbench.compute import models
from rfbench.compute.models import packaged

TENSORS = {"w": np.arange(6.0).reshape(2, 3)}
CONTENTS = {"config.json": b"{}\n", "tokenizer.json": b'{"t": 1}\n'}
DEAD_PID = 2**22 + 17  # beyond Linux's largest pid: no such process


def _entry(tmp_path: Path) -> packaged.Packaged:
    from safetensors.numpy import save_file

    scratch = tmp_path / "scratch.safetensors"
    save_file(TENSORS, str(scratch))
    files = {"model.safetensors": hashlib.sha256(scratch.read_bytes()).hexdigest()}
    files |= {name: hashlib.sha256(blob).hexdigest() for name, blob in CONTENTS.items()}
    return packaged.Packaged("fake", "Fake", "fake-wheel", "x.onnx", "0" * 64, files, "pip x")


def test_a_killed_conversions_temporary_files_are_removed(tmp_path: Path) -> None:
    entry, target = _entry(tmp_path), tmp_path / "models" / "fake"
    target.mkdir(parents=True)
    stale = target / f".model.safetensors.{DEAD_PID}.tmp"
    stale.write_bytes(b"\0" * 4096)  # what a SIGKILL mid-conversion leaves
    alive = target / f".model.safetensors.{os.getppid()}.tmp"  # a running conversion's
    alive.write_bytes(b"partial")
    mine = target / "notes.tmp"  # not rfbench's pattern
    mine.write_text("keep")
    packaged._write(target, entry, TENSORS, CONTENTS)
    assert not stale.exists()
    assert alive.exists() and mine.read_text() == "keep"
    for name, sha in entry.files.items():
        assert models.file_sha256(target / name) == sha


def test_converted_files_take_the_umasks_mode(tmp_path: Path) -> None:
    entry, target = _entry(tmp_path), tmp_path / "m"
    old = os.umask(0o022)
    try:
        packaged._write(target, entry, TENSORS, CONTENTS)
    finally:
        os.umask(old)
    for name in entry.files:
        assert stat.S_IMODE((target / name).stat().st_mode) == 0o644, name


def test_a_folder_where_a_converted_file_belongs_is_one_line(tmp_path: Path) -> None:
    entry, target = _entry(tmp_path), tmp_path / "m"
    (target / "model.safetensors").mkdir(parents=True)
    with pytest.raises(models.ModelError, match="in the way") as err:
        packaged._write(target, entry, TENSORS, CONTENTS)
    assert "rm -r" in str(err.value) and "\n" not in str(err.value)
    assert not list(target.glob(".*.tmp"))  # its own temporary files removed
