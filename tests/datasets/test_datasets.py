"""Data loaders on the data folder of the session (the real files, else the synthetic fixtures:
tests/data_facts.py), preprocessing, and the one-line errors for missing, corrupt, unreadable
and unknown data."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import data_facts as facts
import numpy as np
import pytest

import rfbench.compute.datasets as D
from rfbench.compute.datasets import cache, preprocess
from rfbench.compute.datasets.images import read_cifar_tarball

# class counts of the real files, from each SOURCE.md (fixtures: counted from the raw text)
COUNTS = {
    "banknote": {"0": 762, "1": 610},
    "car": {"unacc": 1210, "acc": 384, "good": 69, "vgood": 65},
    "cmc": {"1": 629, "2": 333, "3": 511},
    "nursery": {
        "not_recom": 4320,
        "priority": 4266,
        "spec_prior": 4044,
        "very_recom": 328,
        "recommend": 2,
    },  # fmt: skip
    "wifi": {"1": 500, "2": 500, "3": 500, "4": 500},
    "yeast": {
        "CYT": 463,
        "NUC": 429,
        "MIT": 244,
        "ME3": 163,
        "ME2": 51,
        "ME1": 44,
        "EXC": 35,
        "VAC": 30,
        "POX": 20,
        "ERL": 5,
    },  # fmt: skip
}
UCI8 = ["abalone", "banknote", "car", "yeast", "cmc", "nursery", "wifi", "chess"]


@pytest.fixture
def shared(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """RFBENCH_DATA = the offline folder; downloads pointed at a dead local port (never used)."""
    monkeypatch.setenv("RFBENCH_DATA", str(data_dir))
    monkeypatch.setenv("RFBENCH_DATA_URL", "http://127.0.0.1:9/")
    return data_dir


def test_registry_pins_equal_the_shared_readme(real_data_dir: Path) -> None:
    text = (real_data_dir / "README.md").read_text()
    pins = dict(re.findall(r"\| shared/data/(\S+) \| [\d,]+ \| `([0-9a-f]{64})` \|", text))
    for folder_sums in re.findall(r"\| shared/data/(\S+)/ \(.*?SHA256SUMS: `([0-9a-f]{64})`", text):
        pins[folder_sums[0] + "/SHA256SUMS"] = folder_sums[1]
    specs = {f.path: f for info in D.DATASETS.values() for f in info.files}
    checked = 0
    for path, sha in pins.items():
        if path in specs and not specs[path].gz:  # gz files are pinned on decompressed content
            assert specs[path].sha256 == sha, path
            checked += 1
    assert checked == 12  # 10 UCI tables + 2 CIFAR manifests


@pytest.mark.parametrize("path", [f.path for i in D.DATASETS.values() for f in i.files])
def test_every_present_file_verifies(shared: Path, path: str) -> None:
    spec = next(f for i in D.DATASETS.values() for f in i.files if f.path == path)
    if not cache.present(spec):
        pytest.skip(f"{spec.path} not in the offline folder")
    path = cache.verify("x", spec)
    if not spec.gz and not spec.manifest:
        assert path.stat().st_size == spec.size


@pytest.mark.parametrize("name", list(facts.REAL_SHAPES))
def test_table_loaders(shared: Path, name: str) -> None:
    ds = D.load(name)
    n, d, k = facts.shapes()[name]
    assert (ds.n, ds.d, ds.n_classes) == (n, d, k)
    assert ds.X.dtype == np.float64
    assert np.isfinite(ds.X).all() and len(ds.feature_names) == d
    if k:
        assert ds.y.dtype == np.int64 and set(np.unique(ds.y)) == set(range(k))
        assert ds.onehot().sum(axis=0).min() >= 1
    if name in COUNTS:
        got = dict(zip(ds.classes, np.bincount(ds.y).tolist(), strict=True))
        assert got == (_raw_counts(shared, name) if facts.uses_fixtures() else COUNTS[name])
    assert ds.metadata["sha256"] == D.DATASETS[name].files[0].sha256
    assert ds.metadata["compat"] is False and ds.label == name


def _raw_counts(root: Path, name: str) -> dict[str, int]:
    """Class counts parsed from the raw text (label = last field; yeast/wifi: whitespace)."""
    spec = D.DATASETS[name].files[0]
    sep = None if name in ("yeast", "wifi") else ","
    labels = [row[-1] for row in facts.raw_rows(root / spec.path, sep)]
    return {c: labels.count(c) for c in sorted(set(labels), key=labels.index)}


def test_encoding_follows_the_authors_column_order(shared: Path) -> None:
    ab = D.load("abalone")
    assert ab.feature_names[:7] == (
        "length", "diameter", "height", "whole_weight", "shucked_weight", "viscera_weight",
        "shell_weight",
    )  # fmt: skip
    assert ab.feature_names[7:] == ("sex=F", "sex=I", "sex=M")
    first = facts.raw_rows(shared / "abalone/abalone.data")[0]  # e.g. M,0.455,...,0.15,15
    sex = [float(first[0] == s) for s in "FIM"]
    np.testing.assert_array_equal(ab.X[0], [float(v) for v in first[1:8]] + sex)
    assert ab.classes[ab.y[0]] == first[-1]
    yeast = D.load("yeast")
    assert "sequence_name" not in yeast.feature_names
    chess = D.load("chess")
    assert chess.X[:, :].sum(axis=1).tolist() == [6.0] * chess.n  # six one-hot blocks per row
    boston = D.load("housing")  # alias
    medv = float(facts.raw_rows(shared / "boston/housing.data", None)[0][-1])
    assert boston.name == "boston" and boston.y.dtype == np.float64 and boston.y[0] == medv


@pytest.mark.parametrize("name", UCI8)
def test_compat_drops_the_last_line_like_the_authors(shared: Path, name: str) -> None:
    robust, compat = D.load(name), D.load(name, compat=True)
    dropped = 0 if name == "nursery" else 1  # nursery's last line is blank
    assert compat.n == robust.n - dropped and compat.metadata["compat_rows_dropped"] == dropped
    np.testing.assert_array_equal(compat.X, robust.X[: compat.n])
    assert compat.label == f"{name}[compat]"


@pytest.mark.parametrize("name", UCI8)
def test_simrf_split_sizes_standardisation_and_determinism(shared: Path, name: str) -> None:
    ds = D.load(name)
    n = ds.n
    s = D.split(ds, "simrf")
    assert (s.train.n, s.test.n, s.val) == (int(n * 0.95), int(n * 0.05), None)
    np.testing.assert_allclose(s.train.X.mean(axis=0), 0.0, atol=1e-12)
    std = s.train.X.std(axis=0)
    np.testing.assert_allclose(std[std > 0], 1.0, rtol=1e-12)
    assert np.isfinite(s.test.X).all()
    again = D.split(D.load(name), "simrf")
    np.testing.assert_array_equal(s.test.X, again.test.X)
    np.testing.assert_array_equal(s.train.y, again.train.y)
    other = D.split(ds, "simrf", seed=7)
    assert not np.array_equal(other.test.X, s.test.X)
    assert s.test.metadata["split_seed"] == 42 and s.test.metadata["part"] == "test"
    json.dumps(s.test.metadata)  # results carry it: must be JSON-serialisable


def test_split_rows_are_the_permutation_of_the_raw_rows(shared: Path) -> None:
    ds = D.load("banknote")
    s = D.split(ds, "derf", standardize=False)
    perm = np.random.default_rng(42).permutation(ds.n)
    n_tr, n_va, n_te = s.metadata["split_sizes"]
    n = ds.n  # real banknote: 1234 / 68 / 68, 2 rows unused
    assert (n_tr, n_va, n_te) == (int(0.9 * n), int(0.05 * n), int(0.05 * n))
    assert s.metadata["split_unused_rows"] == n - n_tr - n_va - n_te
    np.testing.assert_array_equal(s.train.X, ds.X[perm[:n_tr]])
    np.testing.assert_array_equal(s.val.X, ds.X[perm[n_tr : n_tr + n_va]])
    np.testing.assert_array_equal(s.test.X, ds.X[perm[-n_te:]])
    assert s.train.metadata["standardize"] == "none"


def test_derf_split_and_subset(shared: Path) -> None:
    ds = D.load("nursery")
    s = D.split(ds, "derf")
    n = ds.n  # real nursery: 11664 / 648 / 648
    assert (s.train.n, s.val.n, s.test.n) == (int(0.9 * n), int(0.05 * n), int(0.05 * n))
    n_sub = (1000, 100) if n > 2000 else (100, 5)  # the authors' restriction; smaller on fixtures
    sub = D.split(ds, "simrf", subset=n_sub)
    full = D.split(ds, "simrf")
    assert (sub.train.n, sub.test.n) == n_sub and sub.metadata["subset"] == list(n_sub)
    np.testing.assert_array_equal(sub.train.X, full.train.X[: n_sub[0]])  # full-split statistics


def test_constant_training_column_gives_no_nan() -> None:
    X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0], [4.0, 5.0]] * 10)
    ds = D.Dataset("toy", X, np.zeros(40, dtype=np.int64), ("a", "b"), ("c",))
    s = D.split(ds, "simrf")
    assert np.isfinite(s.train.X).all() and s.metadata["constant_columns"] == ["b"]


def test_builtin_sets_need_no_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(tmp_path / "empty"))
    wine, digits = D.load("wine"), D.load("digits")
    assert (wine.n, wine.d, wine.n_classes) == (178, 13, 3)
    assert np.bincount(wine.y).tolist() == [59, 71, 48]
    assert (digits.n, digits.d, digits.n_classes) == (1797, 64, 10)
    assert D.available("wine") and not D.available("abalone")
    assert D.local_status("abalone") == "no"


@pytest.mark.parametrize("name", ["wine", "boston"])
def test_qmc_preprocessing(shared: Path, name: str) -> None:
    ds = D.load(name)
    rows = D.standardize_and_scale(ds, norm=0.5)
    np.testing.assert_allclose(np.linalg.norm(rows.X, axis=1), 0.5, rtol=1e-12)
    assert rows.metadata["qmc_mode"] == "rows" and "zscore" in rows.metadata["qmc_preprocessing"]
    mx = D.standardize_and_scale(ds, norm=1.0, mode="max")
    lengths = np.linalg.norm(mx.X, axis=1)
    assert lengths.max() == pytest.approx(1.0) and lengths.min() < 0.5
    z = (ds.X - ds.X.mean(0)) / ds.X.std(0)  # direction is that of the z-scored row
    np.testing.assert_allclose(rows.X[3] / 0.5, z[3] / np.linalg.norm(z[3]), rtol=1e-12)


def test_area_resize_is_exact_box_averaging() -> None:
    rng = np.random.default_rng(0)
    img = rng.uniform(0, 255, size=(2, 28, 28))
    # 28 -> 8 averages 3.5 x 3.5 pixels: the 7 x 7 block mean of the 2x-replicated image
    fine = img.repeat(2, axis=1).repeat(2, axis=2)
    exact = fine.reshape(2, 8, 7, 8, 7).mean(axis=(2, 4))
    np.testing.assert_allclose(preprocess.area_resize(img, 8), exact, rtol=1e-12)
    big = rng.uniform(size=(3, 32, 32))
    blocks = big.reshape(3, 8, 4, 8, 4).mean(axis=(2, 4))
    np.testing.assert_allclose(preprocess.area_resize(big, 8), blocks, rtol=1e-12)
    A = preprocess.area_matrix(28, 8)
    np.testing.assert_allclose(A.sum(axis=1), 1.0)  # each output is a weighted mean
    np.testing.assert_allclose(A.sum(axis=0), 8 / 28)  # every input pixel counts equally


def test_mnist_test_split(shared: Path) -> None:
    ds = D.load("mnist")
    assert ds.label == "mnist[test]" and (ds.n, ds.d) == (facts.images()[0], 64)
    counts = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert np.bincount(ds.y).tolist() == ([6] * 10 if facts.uses_fixtures() else counts)
    assert ds.X.min() >= 0.0 and ds.X.max() <= 1.0 and ds.X.max() > 0.9
    raw = D.load("mnist", split="test", size=None)
    assert raw.d == 784 and raw.X[0].reshape(28, 28)[:4].sum() == 0  # blank top rows
    A = preprocess.area_matrix(28, 8)
    np.testing.assert_allclose(ds.X[0].reshape(8, 8), A @ raw.X[0].reshape(28, 28) @ A.T)


def test_cifar10_sample_is_labelled_and_ordered(shared: Path) -> None:
    n_train, n_test = facts.images()[1:]
    train = D.load("cifar10")
    assert train.label == "cifar10[sample-train]" and (train.n, train.d) == (n_train, 64)
    csv = (shared / "cifar10/kaggle_train_0001-0200/trainLabels.csv").read_text().split()
    first = [row.split(",")[1] for row in csv[:8]]  # real: frog, truck, truck, deer, ...
    assert [train.classes[i] for i in train.y[:8]] == first  # start of data_batch_1
    test = D.load("cifar10", split="test")
    names = sorted((shared / "cifar10/foolbox_test_00-19").glob("cifar10_*_*.png"))
    assert test.y.tolist() == [int(p.stem.rsplit("_", 1)[1]) for p in names]
    if not facts.uses_fixtures():
        assert test.y.tolist() == [3, 8, 8, 0, 6, 6, 1, 6, 3, 1, 0, 9, 5, 7, 9, 8, 5, 7, 8, 6]
    both = D.load("cifar10", split="all", grayscale=False, size=None)
    assert (both.n, both.d) == (n_train + n_test, 3072) and both.metadata["variant"] == "sample"
    assert 0.0 <= train.X.min() and train.X.max() <= 1.0


def _fake_cifar(path: Path) -> tuple[np.ndarray, list[int]]:
    import io
    import pickle
    import tarfile

    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, size=(12, 3072), dtype=np.uint8)
    labels = list(range(10)) + [3, 4]
    with tarfile.open(path, "w:gz") as tar:
        for i, name in enumerate(["data_batch_1", "data_batch_2", "data_batch_3",
                                  "data_batch_4", "data_batch_5", "test_batch"]):  # fmt: skip
            blob = pickle.dumps({b"data": data[2 * i : 2 * i + 2],
                                 b"labels": labels[2 * i : 2 * i + 2]})  # fmt: skip
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    return data, labels


def test_cifar_tarball_reader(tmp_path: Path) -> None:
    data, labels = _fake_cifar(tmp_path / "c.tar.gz")
    imgs, y = read_cifar_tarball("cifar10", tmp_path / "c.tar.gz", "train")
    assert imgs.shape == (10, 32, 32, 3) and y.tolist() == labels[:10]
    np.testing.assert_array_equal(imgs[0, :, :, 1].ravel(), data[0, 1024:2048])  # channel-major
    imgs, y = read_cifar_tarball("cifar10", tmp_path / "c.tar.gz", "test")
    assert y.tolist() == [3, 4]
    gray = preprocess.grayscale(imgs[:1])
    np.testing.assert_allclose(gray[0, 0, 0], imgs[0, 0, 0] @ [0.299, 0.587, 0.114])


# ---- errors: one line naming the data set, the path, what was expected and the fix ----------


def _copy(data_dir: Path, rel: str, root: Path) -> Path:
    dest = root / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(data_dir / rel, dest)
    return dest


def _one_line(exc: pytest.ExceptionInfo, *parts: str) -> str:
    msg = str(exc.value)
    assert "\n" not in msg
    for part in parts:
        assert part in msg, (part, msg)
    return msg


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupt_file_is_refused(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(tmp_path))
    path = _copy(data_dir, "car/car.data", tmp_path)
    raw = bytearray(path.read_bytes())
    if damage == "flip":
        raw[1000] ^= 0x01
    else:
        raw = raw[: len(raw) // 2]
    path.write_bytes(bytes(raw))
    with pytest.raises(D.DataError) as exc:
        D.load("car")
    size = f"{D.DATASETS['car'].files[0].size:,} bytes"  # real: 51,867
    _one_line(exc, "'car'", str(path), "sha256", size, "rfbench data fetch car", "RFBENCH_DATA")
    assert not D.available("car", verify=True) and D.available("car")


def test_corrupt_gzip_is_refused(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(tmp_path))
    for rel in ("mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"):
        _copy(data_dir, rel, tmp_path)
    path = tmp_path / "mnist/t10k-images-idx3-ubyte.gz"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(D.DataError) as exc:
        D.load("mnist", split="test")
    _one_line(exc, "'mnist'", str(path), "gzip", "rfbench data fetch mnist")
    # a different gzip wrapper around the same bytes is accepted (pinned on decompressed content)
    raw = gzip.decompress((data_dir / "mnist/t10k-images-idx3-ubyte.gz").read_bytes())
    path.write_bytes(gzip.compress(raw, compresslevel=1, mtime=0))
    assert D.load("mnist", split="test").n == facts.images()[0]


def test_corrupt_png_in_sample_is_refused(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(tmp_path))
    shutil.copytree(data_dir / "cifar10", tmp_path / "cifar10")
    png = tmp_path / "cifar10/kaggle_train_0001-0200/0007.png"
    png.chmod(0o644)
    png.write_bytes(png.read_bytes()[:-10])
    with pytest.raises(D.DataError) as exc:
        D.load("cifar10", variant="sample")
    _one_line(exc, "'cifar10'", str(png), "sha256")


def test_missing_file_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(tmp_path))
    with pytest.raises(D.DataError) as exc:
        D.load("yeast", download=False)
    path = tmp_path / "yeast/yeast.data"
    _one_line(exc, "'yeast'", str(path), "missing", "yeast/yeast.data", "rfbench data fetch yeast")


def test_unreadable_file(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(tmp_path))
    (tmp_path / "wifi" / "wifi_localization.txt").mkdir(parents=True)  # a folder, not a file
    with pytest.raises(D.DataError) as exc:
        D.load("wifi", download=False)
    _one_line(exc, "'wifi'", "wifi_localization.txt", "rfbench data fetch wifi")


def test_unknown_name_and_option() -> None:
    with pytest.raises(D.DataError) as exc:
        D.load("nosuch")
    _one_line(exc, "'nosuch'", "abalone", "mnist")
    with pytest.raises(D.DataError) as exc:
        D.load("abalone", compta=True)
    _one_line(exc, "compta", "compat")


def test_cli_list_and_errors(shared: Path) -> None:
    from typer.testing import CliRunner

    from rfbench.cli.app import app

    runner = CliRunner()
    out = runner.invoke(app, ["list", "datasets"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    for name in D.DATASETS:
        assert name in out.output
    assert "yes (test split only)" in out.output and "sample only" in out.output
    bad = runner.invoke(app, ["data", "fetch", "nosuch"])
    assert bad.exit_code == 2 and "unknown data set 'nosuch'" in bad.output
    ok = runner.invoke(app, ["data", "fetch", "abalone"])  # present and verified: no network
    assert ok.exit_code == 0 and ok.output.startswith("ok")


def _pin(monkeypatch, name: str, variant: str, specs: tuple[D.FileSpec, ...]) -> None:
    """Point a registry variant at test files (their real checksums), for code paths whose real
    files are not in the offline folder."""
    from dataclasses import replace

    info = D.DATASETS[name]
    monkeypatch.setitem(D.DATASETS, name, replace(info, variants={**info.variants, variant: specs}))


def test_cifar10_full_tarball_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(tmp_path))
    tar = tmp_path / "cifar10/cifar-10-python.tar.gz"
    tar.parent.mkdir()
    data, labels = _fake_cifar(tar)
    sha, size = cache.digest(tar)
    _pin(
        monkeypatch,
        "cifar10",
        "full",
        (D.FileSpec(tar.relative_to(tmp_path).as_posix(), sha, size),),
    )
    train = D.load("cifar10")  # auto: the tarball is present
    assert train.label == "cifar10" and (train.n, train.d) == (10, 64)
    assert train.metadata["variant"] == "full" and train.y.tolist() == labels[:10]
    rgb = data[0].reshape(3, 32, 32).transpose(1, 2, 0).astype(float)
    gray = rgb @ [0.299, 0.587, 0.114]
    expected = gray.reshape(8, 4, 8, 4).mean(axis=(1, 3)).ravel() / 255
    np.testing.assert_allclose(train.X[0], expected, rtol=1e-12)
    test = D.load("cifar10", split="test")
    assert test.label == "cifar10[test]" and test.y.tolist() == [3, 4]
    tar.write_bytes(tar.read_bytes()[:-100])
    with pytest.raises(D.DataError, match="failed verification"):
        D.load("cifar10", variant="full")


def test_mnist_auto_prefers_the_train_split(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RFBENCH_DATA", str(tmp_path))
    specs = []
    for stem in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        fake = tmp_path / f"mnist/fake-train-{stem}.gz"
        fake.parent.mkdir(exist_ok=True)
        shutil.copyfile(data_dir / f"mnist/{stem}.gz", fake)
        sha, size = cache.digest(fake, gz=True)
        specs.append(D.FileSpec(fake.relative_to(tmp_path).as_posix(), sha, size, gz=True))
    _pin(monkeypatch, "mnist", "train", tuple(specs))
    ds = D.load("mnist")
    assert ds.label == "mnist" and ds.metadata["split"] == "train" and ds.n == facts.images()[0]
    assert D.local_status("mnist") == "yes"
