"""A model folder's tokenizer, loaded and tried before anything runs.

The Rust ``tokenizers`` library reports some bad tokenizer files by panicking: Python sees a
``pyo3_runtime.PanicException``, which derives from ``BaseException`` (not ``Exception``), and
Rust's panic hook writes a backtrace straight to file descriptor 2. :func:`load_tokenizer` and
:func:`check_tokenizer` turn any such failure into one :class:`ModelError` line, with the
backtrace kept out of the terminal while the tokenizer is tried.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rfbench.compute.datasets.errors import ModelError
from rfbench.compute.models.spec import regular_file

#: the largest tokenizer.json read (MiniLM's is 466 kB; multilingual ones reach ~20 MB)
TOKENIZER_LIMIT = 256 << 20
T = TypeVar("T")


def is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a Rust panic surfaced by pyo3 (``pyo3_runtime.PanicException``)."""
    return type(exc).__name__ == "PanicException"


@contextlib.contextmanager
def _quiet_fd2() -> Iterator[None]:
    """Send file descriptor 2 to a scratch file meanwhile (a Rust panic's backtrace)."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no real descriptor 2 (embedded, captured)
        yield
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def guarded(folder: Path, what: str, call: Callable[[], T]) -> T:
    """``call()``, with an exception or a Rust panic of the tokenizer as one ModelError line.

    Parameters
    ----------
    folder : Path
        The model folder (named in the message).
    what : str
        What was being done ("does not load", "fails on the text").
    call : callable
    """
    try:
        return call()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        if not isinstance(exc, Exception) and not is_panic(exc):
            raise
        why = " ".join(str(exc).split())[:120] or type(exc).__name__
        kind = "panics" if is_panic(exc) else "fails"
        raise ModelError(f"model folder {folder}: tokenizer.json {what}: {kind} ({why})") from None


def encode_batch(folder: Path, tokenizer: Any, texts: Sequence[str], limit: int) -> list[Any]:
    """The tokenizer's encodings of ``texts``, truncated to ``limit`` tokens (a failure or a Rust
    panic of the tokenizer is one ModelError line, :func:`guarded`)."""

    def encode() -> list[Any]:
        tokenizer.enable_truncation(limit)
        return tokenizer.encode_batch(list(texts))

    return guarded(folder, "fails on the text", encode)


def load_tokenizer(folder: Path) -> Any:
    """The ``tokenizers.Tokenizer`` of ``folder/tokenizer.json``, without padding."""
    from tokenizers import Tokenizer

    path = regular_file(folder, "tokenizer.json", TOKENIZER_LIMIT)
    tokenizer = guarded(folder, "does not load", lambda: Tokenizer.from_file(str(path)))
    tokenizer.no_padding()
    return tokenizer


def check_tokenizer(folder: Path, vocab: int, max_tokens: int, samples: Sequence[str]) -> None:
    """Load the tokenizer and try it on ``samples``, as the encoder will use it.

    Parameters
    ----------
    folder : Path
    vocab : int
        Rows of the model's word embeddings: every token id must be below it.
    max_tokens : int
        The model's positions (the truncation of every sample).
    samples : sequence of str
        The texts the run will encode.

    Raises
    ------
    ModelError
        The file does not load or panics, its unknown token is not in its vocabulary, a token id
        is out of the model's range, or a sample gives no token at all.
    """
    with _quiet_fd2():
        tokenizer = load_tokenizer(folder)
        unk = getattr(tokenizer.model, "unk_token", None)
        if unk is not None and tokenizer.token_to_id(unk) is None:
            raise ModelError(
                f"model folder {folder}: tokenizer.json: its unknown token {unk!r} is not in its "
                "vocabulary (every unknown word would fail)"
            )
        ids = tokenizer.get_vocab(with_added_tokens=True).values()
        top = max(ids, default=-1)
        if top >= vocab:
            raise ModelError(
                f"model folder {folder}: tokenizer.json has token id {top}, but config.json "
                f"vocab_size = {vocab} (the model's vocabulary is smaller than its tokenizer's)"
            )
        encoded = encode_batch(folder, tokenizer, samples, max_tokens)
    for text, enc in zip(samples, encoded, strict=True):
        if not enc.ids:
            raise ModelError(
                f"model folder {folder}: tokenizer.json turns the text {text[:30]!r}… into zero "
                "tokens"
            )
        if max(enc.ids) >= vocab:
            raise ModelError(
                f"model folder {folder}: tokenizer.json gives token id {max(enc.ids)}, but "
                f"config.json vocab_size = {vocab}"
            )


def split_text(tokenizer: Any, text: str, tokens: int, limit: int = 0) -> list[str]:
    """``text`` (or its first ``limit`` tokens) cut into consecutive pieces that each fill one
    sequence of ``tokens`` tokens, special tokens included, cut where a word starts (so a piece
    tokenizes as it did inside the text): the whole of a long text in sequences of a model's length.

    Parameters
    ----------
    tokenizer : tokenizers.Tokenizer
        The model's tokenizer (its truncation is switched off here).
    text : str
    tokens : int
        Sequence length, special tokens included.
    limit : int
        Tokens of the text used (0 = all of it; otherwise the pieces stop at the word boundary at
        or before this many tokens, and always hold at least one piece).

    Returns
    -------
    list of str
        At least one piece; the last may be shorter.
    """
    tokenizer.no_truncation()
    encoding = tokenizer.encode(text)
    special = encoding.special_tokens_mask
    content = [i for i, s in enumerate(special) if not s]
    per = max(tokens - (len(special) - len(content)), 1)
    words = encoding.word_ids
    stop = len(content) if not limit else min(limit, len(content))
    starts, at = [0], 0
    while stop - at > per:
        cut = at + per
        # back to the first token of its word (a word longer than a sequence is cut inside)
        while (
            cut > at + 1
            and words[content[cut]] is not None
            and (words[content[cut]] == words[content[cut - 1]])
        ):
            cut -= 1
        if cut == at + 1:
            cut = at + per
        starts.append(cut)
        at = cut
    offsets = [encoding.offsets[content[i]][0] for i in starts]
    end = len(text) if stop == len(content) else encoding.offsets[content[stop - 1]][1]
    bounds = [*offsets[1:], end] if offsets else [end]
    return [text[a:b] for a, b in zip([0, *offsets[1:]], bounds, strict=True)]
