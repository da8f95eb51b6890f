"""Downloads against a local HTTP server on 127.0.0.1 (no internet): a mirror laid out like the
data folder, reached through RFBENCH_DATA_URL / ``base_url``; wrong checksums are refused."""

from __future__ import annotations

import functools
import gzip
import http.server
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import data_facts as facts
import numpy as np
import pytest

import rfbench.compute.datasets as D
from rfbench.compute.datasets import cache


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """(base URL, served folder): a threaded http.server on 127.0.0.1, shut down afterwards."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    served = tmp_path / "mirror"
    served.mkdir()
    handler = functools.partial(_Quiet, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("RFBENCH_DATA", str(root))
    monkeypatch.delenv("RFBENCH_DATA_URL", raising=False)
    return root


def _serve(data_dir: Path, served: Path, rel: str, content: bytes | None = None) -> Path:
    dest = served / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        shutil.copyfile(data_dir / rel, dest)
    else:
        dest.write_bytes(content)
    return dest


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob(".partial-*")] if root.exists() else []


def test_fetch_downloads_verifies_and_reuses(data_dir: Path, server, cache_dir: Path) -> None:
    url, served = server
    _serve(data_dir, served, "abalone/abalone.data")
    [first] = D.fetch("abalone", base_url=url)
    assert first.status == "downloaded" and first.path == cache_dir / "abalone/abalone.data"
    assert first.path.read_bytes() == (data_dir / "abalone/abalone.data").read_bytes()
    [again] = D.fetch("abalone", base_url=url)
    assert again.status == "ok"
    assert D.load("abalone").n == facts.shapes()["abalone"][0] and not _leftovers(cache_dir)


def test_load_downloads_on_first_use(data_dir: Path, server, cache_dir, monkeypatch) -> None:
    url, served = server
    _serve(data_dir, served, "banknote/data_banknote_authentication.txt")
    monkeypatch.setenv("RFBENCH_DATA_URL", url)
    assert not D.available("banknote")
    assert D.load("banknote").n == facts.shapes()["banknote"][0]
    assert D.available("banknote", verify=True)


def test_wrong_checksum_response_is_refused(data_dir: Path, server, cache_dir: Path) -> None:
    url, served = server
    good = (data_dir / "cmc/cmc.data").read_bytes()
    _serve(data_dir, served, "cmc/cmc.data", good[:-1] + b"9")  # one changed byte, same size
    with pytest.raises(D.DataError) as exc:
        D.fetch("cmc", base_url=url)
    msg = str(exc.value)
    assert "\n" not in msg and "'cmc'" in msg and "failed verification" in msg
    pinned = D.DATASETS["cmc"].files[0].sha256[:16]  # real: ad2a49da55df24b0
    assert pinned in msg and "rfbench data fetch cmc" in msg
    assert not (cache_dir / "cmc/cmc.data").exists() and not _leftovers(cache_dir)


def test_corrupt_cached_file_is_replaced_by_fetch(data_dir: Path, server, cache_dir) -> None:
    url, served = server
    _serve(data_dir, served, "wifi/wifi_localization.txt")
    D.fetch("wifi", base_url=url)
    cached = cache_dir / "wifi/wifi_localization.txt"
    cached.write_bytes(cached.read_bytes()[:100])
    with pytest.raises(D.DataError, match="failed verification"):
        D.load("wifi")  # load never uses (nor silently repairs) a corrupt file
    [res] = D.fetch("wifi", base_url=url)
    assert res.status == "downloaded" and D.load("wifi").n == facts.shapes()["wifi"][0]


def test_any_gzip_wrapper_of_mnist_is_accepted(data_dir: Path, server, cache_dir) -> None:
    url, served = server
    for stem in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        raw = gzip.decompress((data_dir / f"mnist/{stem}.gz").read_bytes())
        _serve(data_dir, served, f"mnist/{stem}.gz", gzip.compress(raw, 1, mtime=0))
    specs = D.DATASETS["mnist"].variants["test"]
    assert [cache.fetch("mnist", s, base_url=url) for s in specs] == ["downloaded"] * 2
    ds = D.load("mnist", split="test")
    labels = gzip.decompress((data_dir / "mnist/t10k-labels-idx1-ubyte.gz").read_bytes())[8:11]
    assert ds.n == facts.images()[0] and ds.y[:3].tolist() == list(labels)  # real: 7, 2, 1


def test_manifest_folder_from_a_mirror(data_dir: Path, server, cache_dir) -> None:
    url, served = server
    shutil.copytree(data_dir / "cifar10/foolbox_test_00-19", served / "cifar10/foolbox_test_00-19")
    spec = D.DATASETS["cifar10"].variants["sample"][1]
    assert cache.fetch("cifar10", spec, base_url=url) == "downloaded"
    n_test = facts.images()[2]
    assert len(list((cache_dir / "cifar10/foolbox_test_00-19").glob("*.png"))) == n_test
    test = D.load("cifar10", split="test", variant="sample")
    assert test.n == n_test and test.label == "cifar10[sample-test]"


def test_http_404_and_dead_server(server, cache_dir: Path, monkeypatch) -> None:
    url, _ = server
    with pytest.raises(D.DataError) as exc:
        D.fetch("yeast", base_url=url)  # nothing served: 404
    msg = str(exc.value)
    assert "'yeast'" in msg and "404" in msg and "yeast/yeast.data" in msg
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("RFBENCH_DATA_URL", f"http://127.0.0.1:{port}")
    with pytest.raises(D.DataError) as exc:
        D.load("yeast")  # offline, file missing: one clear line, no traceback needed
    msg = str(exc.value)
    assert "\n" not in msg and str(cache_dir / "yeast/yeast.data") in msg
    assert "rfbench data fetch yeast" in msg and "RFBENCH_DATA" in msg
    assert not _leftovers(cache_dir)


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("http://rfbench-no-such-host.invalid", "no network: host not found"),
        ("refused", "connection refused"),
    ],
)
def test_an_offline_download_error_is_one_short_line(cache_dir, monkeypatch, where, reason) -> None:
    """Was ~900 characters of urllib traces; now the data set, the reason in a few words and the
    fix (a folder that holds the file, or a fetch when online). ``.invalid`` never resolves."""
    if where == "refused":
        with socket.socket() as s:  # a port with nobody listening
            s.bind(("127.0.0.1", 0))
            where = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("RFBENCH_DATA_URL", where)
    with pytest.raises(D.DataError) as exc:
        D.load("yeast")
    msg = str(exc.value)
    path = str(cache_dir / "yeast/yeast.data")  # as long as the user's folder makes it
    assert "\n" not in msg and len(msg) - len(path) < 250, (len(msg), msg)
    assert f"data set 'yeast': no verified copy of {cache_dir / 'yeast/yeast.data'}" in msg
    assert f"the download failed ({reason}" in msg
    assert "set RFBENCH_DATA to a folder that holds yeast/yeast.data" in msg
    assert "`rfbench data fetch yeast` when online" in msg
    assert "Pool" not in msg and "Error" not in msg  # no urllib3/requests jargon
    # issue 39: a failed download leaves no empty folder behind (reproduce offline left many)
    assert not (cache_dir / "yeast").exists()


def test_cli_fetch_from_mirror(data_dir: Path, server, cache_dir: Path) -> None:
    from typer.testing import CliRunner

    from rfbench.cli.app import app

    url, served = server
    _serve(data_dir, served, "yeast/yeast.data")
    out = CliRunner().invoke(app, ["data", "fetch", "yeast", "--url", url])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("downloaded") and str(cache_dir) in out.output
    X = D.load("yeast").X
    assert X.shape == facts.shapes()["yeast"][:2] and np.isfinite(X).all()


@pytest.mark.parametrize("url", ["file:///srv/mirror", "/srv/mirror", "ftp://mirror/data"])
def test_cli_fetch_refuses_a_mirror_it_cannot_download_from(url: str, cache_dir: Path) -> None:
    """A local folder or file:// mirror was tried and failed as 'cannot connect'."""
    from cli_helpers import one_line_error
    from typer.testing import CliRunner

    from rfbench.cli.app import app

    out = CliRunner().invoke(app, ["data", "fetch", "yeast", "--url", url])
    one_line_error(out, f"invalid value for 'url': '{url}'", "set RFBENCH_DATA to its folder")
    assert not cache_dir.exists()
