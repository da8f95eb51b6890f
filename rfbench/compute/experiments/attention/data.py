"""Where the attention experiment's heads come from: a pretrained model (rfbench.compute.models)
or the user's Q, K, V file (``--data``; docs/experiments.md#attention, "Your own heads").
"""

from __future__ import annotations

import functools
import zipfile

import numpy as np

from rfbench.compute import models
from rfbench.compute.datasets import user
from rfbench.compute.datasets.errors import DataError
from rfbench.compute.datasets.filesize import NpyHeader, read_npy_header
from rfbench.compute.memlimits import budget, human
from rfbench.compute.models import texts

#: the text model-derived heads are fitted on (learned maps, data-dependent estimators)
TEXT = "GPL-3"
#: the held-out text every method is measured on (rfbench.compute.experiments.attention.heldout)
HELD_OUT = "GFDL-1.3"
#: a --data file's tokens are split in two halves (fit, measure) of at least this many each
MIN_HALF = 2


#: T × T float64 arrays of one head alive at once in a job (exact attention, its logarithm, the
#: estimate, ...): the experiment's own estimate (Attention.peak_memory)
SQUARES = 12
#: float64 copies of q, k, v alive while they are read, checked and rescaled
COPIES = 4


def declared(name: str) -> dict[str, NpyHeader]:
    """The q, k, v arrays a --data file's .npz declares, from the headers of those members only
    (nothing decompressed beyond them): name -> NpyHeader.

    Raises
    ------
    DataError
        Not a file, not an .npz, a member missing or with a header numpy would not read.
    """
    path, _, _ = user.parse(name)
    if not path.is_file():
        raise DataError(f"data file {path}: no such file")
    if path.suffix.lower() != ".npz":
        raise DataError(f"data file {path}: expected an .npz file with arrays q, k, v")
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            npy = {n.removesuffix(".npy"): n for n in names if n.endswith(".npy")}
            members = _named(path, npy)  # type: ignore[arg-type]
            headers = {}
            for key, member in members.items():
                with archive.open(str(member)) as fh:
                    headers[key] = read_npy_header(fh, f"data file {path}: member {member}")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError) as exc:
        raise DataError(f"data file {path}: not a NumPy .npz file ({exc})") from None
    return headers


def check_size(name: str) -> tuple[int, int]:
    """(T, S), the query and key tokens a --data file declares, after checking against the memory
    budget of one job (:func:`rfbench.compute.memlimits.budget`, ``--max-memory``) what reading
    it takes: q, k, v as float64 copies and a few T × S matrices of one head; one DataError line
    if that does not fit, before any value is read."""
    headers = declared(name)
    path = user.parse(name)[0]
    shapes = {key: h.shape if len(h.shape) != 2 else (1, *h.shape) for key, h in headers.items()}
    if any(len(shape) != 3 for shape in shapes.values()):
        return 0, 0  # the shape is refused by name when the arrays are read (_check)
    t, s = shapes["q"][1], shapes["k"][1]
    values = sum(h.size for h in headers.values())
    need = 8 * (COPIES * values + SQUARES * t * s)
    limit = budget(1)
    if need > limit.bytes:
        raise DataError(
            f"data file {path}: declares q, k, v of {t:,} query and {s:,} key tokens "
            f"({values:,} values), about {human(need)} to measure, more than the "
            f"{human(limit.bytes)} budget ({limit.source}); use fewer tokens"
        )
    return t, s


def _named(path: object, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """q, k, v by name in either case (``q`` or ``Q``; both at once is ambiguous)."""
    out = {}
    for name in ("q", "k", "v"):
        found = user.either_case(path, arrays, name)
        if found is None:
            have = ", ".join(sorted(arrays)) or "none"
            raise DataError(
                f"data file {path}: array {name!r} is missing (need q, k, v or Q, K, V; has {have})"
            )
        out[name] = found
    return out


def _check_range(path: object, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Refuse heads whose logits overflow or whose output is 0; return v rescaled per head.

    Every output metric is relative (‖Ô − O‖/‖O‖ with O = AV linear in V), so V is divided per
    head by a power of two near its largest value: exact, and ×1e300 values become computable.
    The logits qᵀk are not scale-free: they must be finite (Cauchy–Schwarz: max‖q‖·max‖k‖).
    """
    with np.errstate(over="ignore"):
        qn = np.linalg.norm(q, axis=-1).max(axis=-1)
        kn = np.linalg.norm(k, axis=-1).max(axis=-1)
        bound = qn * kn
    bad = np.flatnonzero(~np.isfinite(bound))
    if bad.size:
        h = int(bad[0])
        raise DataError(
            f"data file {path}: head {h}: q and k give logits qᵀk beyond float64 (max ‖q‖ = "
            f"{qn[h]:.3g}, max ‖k‖ = {kn[h]:.3g}); scale them so that qᵀk is the attention logit"
        )
    zero = [h for h in range(v.shape[0]) if not np.any(v[h])]
    if zero:
        raise DataError(
            f"data file {path}: array 'v' is all zero in head {zero[0]}: the output O = AV is 0 "
            "and its relative errors are undefined"
        )
    # each head divided by the power of two nearest its largest magnitude (exact: the mantissas
    # stay), so that sums of squares neither overflow nor underflow
    return np.ldexp(v, -np.frexp(np.abs(v).max(axis=(1, 2)))[1][:, None, None])


def _check(path: object, arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    named = _named(path, arrays)
    out = []
    for name in ("q", "k", "v"):
        x = named[name]
        if x.dtype.kind not in "iuf":
            raise DataError(f"data file {path}: array {name!r} is not numeric ({x.dtype})")
        if x.ndim == 2:
            x = x[None]
        if x.ndim != 3 or min(x.shape) < 1:
            raise DataError(
                f"data file {path}: array {name!r} has shape {named[name].shape}; expected "
                "(heads, tokens, d) or (tokens, d)"
            )
        if not np.isfinite(x).all():
            raise DataError(f"data file {path}: array {name!r} has NaN or infinite values")
        out.append(np.asarray(x, dtype=np.float64))
    q, k, v = out
    if not (q.shape[0] == k.shape[0] == v.shape[0]):
        raise DataError(
            f"data file {path}: q, k, v have {q.shape[0]}, {k.shape[0]}, {v.shape[0]} heads; "
            "they must be equal"
        )
    if q.shape[2] != k.shape[2]:
        raise DataError(f"data file {path}: q has d = {q.shape[2]} but k has d = {k.shape[2]}")
    if k.shape[1] != v.shape[1]:
        raise DataError(
            f"data file {path}: k has {k.shape[1]} tokens but v has {v.shape[1]} (must be equal)"
        )
    short = min(q.shape[1], k.shape[1])
    if short < 2 * MIN_HALF:
        raise DataError(
            f"data file {path}: {short} tokens cannot be split into a fitting and a measuring half "
            f"(at least {MIN_HALF} tokens each; the first half fits, the second is measured)"
        )
    return q, k, _check_range(path, q, k, v)


@functools.lru_cache(maxsize=4)
def load_qkv(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The user's heads from ``PATH[@SHA256PREFIX]`` of an .npz with q, k, v.

    Returns
    -------
    q : ndarray, shape (heads, T, d)
    k : ndarray, shape (heads, S, d)
    v : ndarray, shape (heads, S, d_v)

    Raises
    ------
    DataError
        Missing file, changed content, not an .npz, missing or malformed arrays, arrays too large
        for the memory budget (:func:`check_size`, from the headers, before anything is read).
    """
    path, _, sha = user.parse(name)
    members = declared(name)  # the headers, sized before anything is read
    check_size(name)
    if sha and not user.sha256(path).startswith(sha):
        raise DataError(f"data file {path}: its content changed since these results (sha256)")
    stems = {n: n for n in members}
    try:
        with np.load(path, allow_pickle=False) as loaded:
            real = {f.lower(): f for f in loaded.files if f.lower() in stems}
            # only q, k and v are read (any other member stays compressed)
            arrays = {real[key]: np.asarray(loaded[real[key]]) for key in members}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        why = " ".join(str(exc).split())[:100]
        raise DataError(f"data file {path}: not a NumPy .npz file ({why})") from None
    return _check(path, arrays)


def shape(
    model: str, data: str, tokens: int, fit_tokens: int = 0, fitting: bool = True
) -> tuple[int, int, int, int]:
    """(layers, heads, T, d) of the source (computes and caches the activations of the held-out
    text and, with ``fitting``, of every sequence of the fitting text, or of its first
    ``fit_tokens``, if needed)."""
    if data:
        q, _, _ = load_qkv(data)
        return (1, *q.shape)
    acts = models.activations(model, texts.text(HELD_OUT), tokens)
    if fitting:
        models.sequences(model, texts.text(TEXT), tokens, fit_tokens)
    return acts.q.shape
