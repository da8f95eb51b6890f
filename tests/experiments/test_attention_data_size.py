"""attention --data is sized from its .npz headers and its own token count before anything is
read, and only q, k, v are read (issue 44 item 3: an honest 19 MB file of 100,000 tokens ended in
an internal MemoryError under --max-memory 1G; a deflate bomb was read whole)."""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments.attention import data as source

RUN = ("--draws", 3, "--backend", "serial", "--quiet", "--no-plot", "--budget", 8,
       "--estimators", "positive@iid")  # fmt: skip


def _run(path: Path, out: Path, *extra: object, cache: Path):
    args = ["attention", "--data", str(path), "--out", str(out), *map(str, RUN + extra)]
    return CliRunner(env={"RFBENCH_CACHE": str(cache)}).invoke(app, args)


def _zeros_member(archive: zipfile.ZipFile, name: str, shape: tuple[int, ...]) -> None:
    """A float64 array of zeros written as a deflated .npy member, streamed (never in memory)."""
    header = {"descr": "<f8", "fortran_order": False, "shape": shape}
    with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
        np.lib.format.write_array_header_1_0(member, header)
        block, left = bytes(1 << 20), 8 * int(np.prod(shape))
        while left:
            member.write(block[: min(left, len(block))])
            left -= min(left, len(block))


def test_a_long_honest_file_is_refused_in_one_line_by_its_token_count(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    path = tmp_path / "long.npz"
    q, k, v = (rng.standard_normal((100_000, 8)) for _ in range(3))
    np.savez(path, q=q, k=k, v=v)  # 19 MB: 100,000 tokens, whose T × T matrices are 80 GB
    res = _run(path, tmp_path / "o.parquet", "--max-memory", "1G", cache=tmp_path / "c")
    one_line_error(res, str(path), "100,000", "budget")
    assert not (tmp_path / "o.parquet").exists()


def test_a_deflate_bomb_is_refused_from_its_header(tmp_path: Path) -> None:
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("q", "k", "v"):
            _zeros_member(archive, name, (1, 64, 200_000))  # 100 MB each, ~100 kB deflated
    assert path.stat().st_size < 2 << 20
    tracemalloc.start()
    res = _run(path, tmp_path / "o.parquet", "--max-memory", "200M", cache=tmp_path / "c")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    one_line_error(res, str(path), "budget")
    assert peak < 50 << 20  # nothing decompressed


def test_only_q_k_v_are_read(tmp_path: Path) -> None:
    """A large other member stays compressed: the arrays are read, the extra one never."""
    rng = np.random.default_rng(1)
    path = tmp_path / "extra.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("q", "k", "v"):
            with archive.open(f"{name}.npy", "w") as member:
                np.lib.format.write_array(member, 0.5 * rng.standard_normal((2, 16, 4)))
        _zeros_member(archive, "attention_maps", (1, 4096, 8192))  # 256 MB of zeros
    source.load_qkv.cache_clear()
    tracemalloc.start()
    q, k, v = source.load_qkv(str(path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert q.shape == k.shape == v.shape == (2, 16, 4)
    assert peak < 20 << 20
    assert source.check_size(str(path)) == (16, 16)
