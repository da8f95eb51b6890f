"""The caches of what the encoder computes (activations, sentence embeddings) in rfbench's cache
folder, keyed on the model, the input and :func:`encoder_digest`: docs/experiments.md#attention
("Caches")."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from rfbench.compute.datasets.errors import ModelError
from rfbench.compute.models.bert import Activations, causal_attention, exact_attention
from rfbench.compute.models.files import (
    _checked,
    _digest,
    _load,
    _sha256,
    cache_root,
    load_model,
    model_folder,
)


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


def _read(
    path: Path,
    identity: dict[str, str],
    shapes: dict[str, tuple[int, ...]] | None = None,
    members: tuple[str, ...] | None = None,
) -> dict[str, np.ndarray] | None:
    """The arrays of a cache file (given ``members``: only those are read) whose identity matches
    and whose values are finite (and, given ``shapes``, exactly those arrays with those shapes),
    else None."""
    try:
        with np.load(path, allow_pickle=False) as f:
            names = f.files if members is None else [*identity, *members]
            arrays = {key: f[key] for key in names}
    except Exception:  # noqa: BLE001 - any damage (BadZipFile: Bad CRC-32, truncation, …)
        return None
    for key, value in identity.items():
        if key not in arrays or str(arrays.pop(key)) != value:
            return None
    if not all(a.dtype.kind == "f" and np.isfinite(a).all() for a in arrays.values()):
        return None
    if shapes is not None and any(
        name not in arrays or arrays[name].shape != tuple(shape) for name, shape in shapes.items()
    ):
        return None
    return arrays


#: paths in the way of a cache already named on stderr (once per process)
_NAMED: set[Path] = set()


def _in_the_way(path: Path) -> Path | None:
    """What blocks writing ``path``: itself if it exists, else its nearest ancestor that exists
    and is not a folder (a file, a FIFO where a cache folder belongs); None if nothing does."""
    if os.path.lexists(path):
        return path
    for folder in path.parents:
        if os.path.lexists(folder):
            return None if folder.is_dir() else folder
    return None


def _write(path: Path, arrays: dict[str, np.ndarray], identity: dict[str, str]) -> None:
    """Write a cache file atomically. A cache that cannot be written is kept in this process's
    memory instead (a path in the way is named once, with the command that removes it)."""
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.npz")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(tmp, **arrays, **{k: np.array(v) for k, v in identity.items()})
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # NotADirectoryError too: a file where a folder is
            tmp.unlink()
        _UNWRITTEN[path] = arrays
        blocker = _in_the_way(path)
        if blocker is not None and blocker not in _NAMED:
            _NAMED.add(blocker)
            rm = "rm -r" if blocker.is_dir() and not blocker.is_symlink() else "rm"
            kind = "cache file" if blocker == path else "cache folder"
            print(
                f"rfbench: cannot write the {kind} {blocker} ({exc.strerror}); computed without "
                f"it; remove it with: {rm} '{blocker}'",
                file=sys.stderr,
            )


def cached(
    path: Path,
    identity: dict[str, str],
    compute: Callable[[], dict[str, np.ndarray]],
    shapes: dict[str, tuple[int, ...]] | None = None,
) -> dict[str, np.ndarray]:
    """The arrays cached at ``path`` if its identity matches (and not under ``--force``), else
    ``compute()``, written to ``path``; a damaged file (given ``shapes``: also one whose arrays
    do not have those shapes) is computed again and replaced. Also for other per-machine caches
    (fitted attention maps)."""
    forced = _FRESH is not None and path not in _FRESH
    if not forced and path in _UNWRITTEN:
        return _UNWRITTEN[path]
    if not forced and path.is_file():
        arrays = _read(path, identity, shapes)
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


def pieces(model: str, text: str, tokens: int, limit: int = 0) -> tuple[str, ...]:
    """``text`` (or its first ``limit`` tokens) cut at word starts into consecutive pieces of one
    sequence of ``tokens`` tokens each, by the model's own tokenizer (the model's ``tokenizer``
    attribute, a ``tokenizers.Tokenizer``; rfbench.compute.models.tokens.split_text).

    Returns
    -------
    tuple of str
        At least one piece; concatenated, the text (or its first ``limit`` tokens).
    """
    return _pieces(model_folder(model)[1], model, text, tokens, limit)


@functools.lru_cache(maxsize=16)
def _pieces(digest: str, model: str, text: str, tokens: int, limit: int) -> tuple[str, ...]:
    from rfbench.compute.models.tokens import split_text

    return tuple(split_text(load_model(model).tokenizer, text, tokens, limit))


def sequences(
    model: str, text: str, tokens: int, limit: int = 0, layer: int | None = None
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Q and K of the whole of a long ``text`` (or its first ``limit`` tokens) in sequences of
    ``tokens`` tokens (:func:`pieces`, each run through the encoder on its own), cached in one
    file like :func:`activations`, one array per layer (``layer``: only that layer's are read).

    Returns
    -------
    q, k : ndarray, shape (layers, heads, ΣT_s, d_head), or (heads, ΣT_s, d_head) for ``layer``
        The sequences one after another along the token axis.
    lengths : tuple of int
        T_s of each sequence, in order.
    """
    parts = pieces(model, text, tokens, limit)
    folder, path, identity = _keyed(model, "\0".join(parts), tokens, "sequences")

    def compute() -> dict[str, np.ndarray]:
        encoder = load_model(model)
        acts = [encoder.activations(piece, tokens) for piece in parts]
        arrays = {f"{name}{i}": np.concatenate([getattr(a, name)[i] for a in acts], axis=1)
                  for i in range(len(acts[0].q)) for name in ("q", "k")}  # fmt: skip
        _check_finite(folder, "activations", arrays)
        return {**arrays, "lengths": np.array([a.q.shape[2] for a in acts], dtype=float)}

    fresh = _FRESH is None or path in _FRESH
    got = read_layer(path, identity, layer) if layer is not None and fresh else None
    if got is None:
        a = cached(path, identity, compute)
        if not _consistent(a):  # whole and finite, but arrays of other shapes: damage
            a = compute()
            _write(path, a, identity)
        layers = range(len([k for k in a if k.startswith("q")]))
        chosen = [layer] if layer is not None else list(layers)
        q = np.stack([a[f"q{i}"] for i in chosen])
        k = np.stack([a[f"k{i}"] for i in chosen])
        got = (q[0], k[0]) if layer is not None else (q, k), a["lengths"]
    (q, k), lengths = got
    return q, k, tuple(int(n) for n in lengths)


def _consistent(arrays: dict[str, np.ndarray]) -> bool:
    """Whether a :func:`sequences` file's arrays fit together: every layer's q of one shape
    (heads, Σ lengths, d), every layer's k of one shape (key heads, Σ lengths, d; fewer heads
    than q in a grouped-query model)."""
    lengths = arrays.get("lengths")
    if lengths is None or lengths.ndim != 1:
        return False
    for side in "qk":
        found = [a for key, a in arrays.items() if key[:1] == side and key[1:].isdigit()]
        if not found or found[0].ndim != 3 or found[0].shape[1] != int(lengths.sum()):
            return False
        if any(a.shape != found[0].shape for a in found):
            return False
    return True


def read_layer(
    path: Path, identity: dict[str, str], layer: int
) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray] | None:
    """One layer's q and k and the lengths from a :func:`sequences` file, reading only those
    members (None: absent, damaged or of another identity; :func:`cached` then decides)."""
    if path in _UNWRITTEN or not path.is_file():
        return None
    arrays = _read(path, identity, members=(f"q{layer}", f"k{layer}", "lengths"))
    if arrays is None:
        return None
    q, k, lengths = arrays[f"q{layer}"], arrays[f"k{layer}"], arrays["lengths"]
    total = int(lengths.sum())
    if q.ndim != 3 or k.ndim != 3 or q.shape[1] != total or k.shape[1] != total:
        return None
    return (q, k), lengths


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
