"""MNIST (IDX files) and CIFAR-10 (python tarball, or the 220-image PNG sample) for the DERF
variance experiment: docs/experiments.md#derf-fig2 and docs/experiments.md#derf-a3 — grayscale
(ITU-R 601) for CIFAR, exact area resize to 8x8, pixels in [0, 1], flattened to 64 dimensions
(``size=None`` keeps full size).

The CIFAR tarball is read in place on every load (after its sha256 check; ~1 s), so no unpinned
extracted copy is ever trusted. Its batches are pickles: they are unpickled only after the
tarball matched the pinned checksum.
"""

from __future__ import annotations

import gzip
import pickle
import tarfile
import zlib
from pathlib import Path

import numpy as np

from rfbench.compute.datasets import cache, errors
from rfbench.compute.datasets import preprocess as pp
from rfbench.compute.datasets.preprocess import Dataset
from rfbench.compute.datasets.registry import DatasetInfo

CIFAR_CLASSES = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)  # fmt: skip
SPLITS = ("train", "test", "all")


def read_idx(name: str, path: Path, magic: int) -> np.ndarray:
    """An IDX array from a gzip file: 2049 = labels (n,), 2051 = images (n, rows, cols) uint8."""
    ndim = {2049: 1, 2051: 3}[magic]
    what = f"a gzip IDX file with magic {magic}"
    try:
        raw = gzip.decompress(path.read_bytes())
        header = np.frombuffer(raw, dtype=">i4", count=1 + ndim)
        shape = tuple(int(s) for s in header[1:])
        if int(header[0]) != magic or len(raw) != 4 * (1 + ndim) + int(np.prod(shape)):
            raise ValueError(f"header {header.tolist()} does not match {len(raw)} bytes")
        return np.frombuffer(raw, dtype=np.uint8, offset=4 * (1 + ndim)).reshape(shape)
    except (OSError, EOFError, ValueError, zlib.error) as exc:
        raise errors.unreadable(name, path, what, exc) from exc


def _to_features(
    images: np.ndarray, size: int | None, gray: bool = False, chunk: int = 5_000
) -> tuple[np.ndarray, str]:
    """(n, h, w[, 3]) uint8 pixels → (n, d) float64 in [0, 1]: area-resized to size x size,
    then ITU-R 601 grayscale if ``gray`` (both are linear, so the order does not matter; this
    one is cheaper). Chunked so that no full-size float copy is held."""
    out = []
    for start in range(0, len(images), chunk):
        block = images[start : start + chunk]
        block = pp.area_resize(block, size) if size else np.asarray(block, dtype=np.float64)
        if gray:
            block = pp.grayscale(block)
        out.append(block.reshape(len(block), -1) / 255.0)
    how = f"exact area resize to {size}x{size} (overlap-weighted box mean)" if size else "none"
    return np.concatenate(out), how


def _pixel_names(n_feat: int, size: int | None, channels: int) -> tuple[str, ...]:
    side = size if size is not None else int(round((n_feat // channels) ** 0.5))
    suffix = ("",) if channels == 1 else ("_r", "_g", "_b")
    return tuple(f"px{r}_{c}{s}" for r in range(side) for c in range(side) for s in suffix)


def load_mnist(
    info: DatasetInfo, *, split: str = "auto", size: int | None = 8, download: bool = True
) -> Dataset:
    """MNIST digits. ``split``: "train" (60,000; the spec's choice), "test" (10,000) or "auto" =
    train if its files are present, else test if present, else download train."""
    if split == "auto":
        have = [s for s in ("train", "test") if all(map(cache.present, info.variants[s]))]
        split = have[0] if have else "train"
    if split not in ("train", "test"):
        raise errors.DataError(
            f"data set 'mnist': unknown split {split!r}; allowed: auto, train, test"
        )
    img_spec, lab_spec = info.variants[split]
    images = read_idx(info.name, cache.ensure(info.name, img_spec, download_missing=download), 2051)
    labels = read_idx(info.name, cache.ensure(info.name, lab_spec, download_missing=download), 2049)
    if len(images) != len(labels):
        raise errors.unreadable(
            info.name, cache.locate(lab_spec), f"{len(images)} labels", f"found {len(labels)}"
        )
    X, how = _to_features(images, size)
    meta = {
        "dataset": info.name,
        "split": split,
        "files": [img_spec.path, lab_spec.path],
        "sha256_decompressed": [img_spec.sha256, lab_spec.sha256],
        "resize": how,
        "pixel_scale": "x/255 in [0, 1]",
    }
    classes = tuple(str(i) for i in range(10))
    names = _pixel_names(X.shape[1], size, 1)
    variant = "" if split == "train" else split
    return Dataset(info.name, X, labels.astype(np.int64), names, classes, meta, variant)


def read_cifar_tarball(name: str, path: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """(n, 32, 32, 3) uint8 images and labels from ``cifar-10-python.tar.gz``, batches in order
    data_batch_1..5 (train) then test_batch (test)."""
    wanted = {"train": [f"data_batch_{i}" for i in range(1, 6)], "test": ["test_batch"]}
    order = wanted["train"] + wanted["test"] if split == "all" else wanted[split]
    found: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                base = member.name.rsplit("/", 1)[-1]
                if base in order and member.isfile():
                    batch = pickle.load(tar.extractfile(member), encoding="bytes")  # noqa: S301
                    data = np.asarray(batch[b"data"], dtype=np.uint8)
                    imgs = data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
                    found[base] = (imgs, np.asarray(batch[b"labels"], dtype=np.int64))
        missing = [b for b in order if b not in found]
        if missing:
            raise ValueError(f"members {missing} not in the archive")
    except (OSError, EOFError, ValueError, KeyError, pickle.UnpicklingError, zlib.error) as exc:
        raise errors.unreadable(name, path, "the CIFAR-10 python tarball", exc) from exc
    return (
        np.concatenate([found[b][0] for b in order]),
        np.concatenate([found[b][1] for b in order]),
    )


def read_cifar_sample(name: str, root: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """The PNG sample: kaggle_train_0001-0200 (train, labels from trainLabels.csv, images in
    training order) and foolbox_test_00-19 (test images 0-19, label in the file name)."""
    from PIL import Image

    folders = {"train": ["kaggle_train_0001-0200"], "test": ["foolbox_test_00-19"]}
    chosen = folders["train"] + folders["test"] if split == "all" else folders[split]
    files: list[tuple[Path, int]] = []
    try:
        for folder in chosen:
            base = root / "cifar10" / folder
            labels_csv = base / "trainLabels.csv"
            if labels_csv.exists():  # rows "<n>.png,<class name>"; files renamed to 4 digits
                for line in labels_csv.read_text(encoding="utf-8").split():
                    stem, cls = line.split(",")
                    png = base / f"{int(stem.split('.')[0]):04d}.png"
                    files.append((png, CIFAR_CLASSES.index(cls)))
            else:  # cifar10_<index>_<label>.png
                for png in sorted(base.glob("cifar10_*_*.png")):
                    files.append((png, int(png.stem.rsplit("_", 1)[1])))
        imgs = [np.asarray(Image.open(p).convert("RGB"), dtype=np.uint8) for p, _ in files]
    except (OSError, ValueError) as exc:
        where = root / "cifar10"
        raise errors.unreadable(name, where, "32x32 RGB PNG files and their labels", exc) from exc
    return np.stack(imgs), np.asarray([label for _, label in files], dtype=np.int64)


def load_cifar10(
    info: DatasetInfo,
    *,
    variant: str = "auto",
    split: str = "train",
    size: int | None = 8,
    grayscale: bool = True,
    download: bool = True,
) -> Dataset:
    """CIFAR-10. ``variant``: "full" (the python tarball), "sample" (the 220 PNGs: 200 train,
    20 test) or "auto" = full if the tarball is present, else the sample if present, else
    download the full tarball. ``split``: train | test | all. Grayscale gives d = 64 at size 8."""
    if split not in SPLITS:
        raise errors.DataError(
            f"data set 'cifar10': unknown split {split!r}; allowed: all, train, test"
        )
    full, samples = info.variants["full"], info.variants["sample"]
    needed = {"train": samples[:1], "test": samples[1:], "all": samples}[split]
    if variant == "auto":
        has_sample = all(map(cache.present, needed))
        variant = "sample" if has_sample and not cache.present(full[0]) else "full"
    if variant == "full":
        path = cache.ensure(info.name, full[0], download_missing=download)
        rgb, labels = read_cifar_tarball(info.name, path, split)
        files = [full[0].path]
    elif variant == "sample":
        for spec in needed:
            cache.verify(info.name, spec)
        rgb, labels = read_cifar_sample(info.name, cache.data_root(), split)
        files = [spec.path for spec in needed]
    else:
        raise errors.DataError(
            f"data set 'cifar10': unknown variant {variant!r}; allowed: auto, full, sample"
        )
    X, how = _to_features(rgb, size, gray=grayscale)
    meta = {
        "dataset": info.name,
        "variant": variant,
        "split": split,
        "files": files,
        "n_images": int(len(labels)),
        "grayscale": f"ITU-R 601 {pp.GRAY_WEIGHTS}" if grayscale else "none (RGB)",
        "resize": how,
        "pixel_scale": "x/255 in [0, 1]",
    }
    tag = f"sample-{split}" if variant == "sample" else ("" if split == "train" else split)
    names = _pixel_names(X.shape[1], size, 1 if grayscale else 3)
    return Dataset(info.name, X, labels, names, CIFAR_CLASSES, meta, tag)
