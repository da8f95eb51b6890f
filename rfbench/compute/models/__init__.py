"""Pretrained transformers as a source of real queries, keys and values.

docs/experiments.md#attention ("Your own model", "A second model", "Caches"). :func:`model_folder`
finds a model (a local BERT-family folder, the installed default all-MiniLM-L6-v2, Wang et al.,
2020, or a packaged model by name), :func:`check_model` checks it without reading its weights,
:func:`model_digest` is its identity, and :func:`activations` and :func:`embeddings` cache what
the encoder (:func:`load_model`) computes in :func:`cache_root`, keyed on the model, the input and
:func:`encoder_digest`.
"""

from rfbench.compute.datasets.errors import INSTALL, PACKAGE, ModelError, ModelUnavailable
from rfbench.compute.models.bert import Activations, Bert
from rfbench.compute.models.cache import (
    activations,
    cache_dir,
    cached,
    embeddings,
    encoder_digest,
    pieces,
    recompute,
    sequences,
)
from rfbench.compute.models.files import (
    DEFAULT_MODEL,
    cache_root,
    check_model,
    file_sha256,
    is_default,
    load_model,
    locate,
    model_digest,
    model_folder,
    model_label,
    models_dir,
    packaged_model,
)
from rfbench.compute.models.packaged import PACKAGED
from rfbench.compute.models.spec import ModelSpec

__all__ = [
    "Activations",
    "Bert",
    "DEFAULT_MODEL",
    "INSTALL",
    "ModelError",
    "ModelSpec",
    "ModelUnavailable",
    "PACKAGE",
    "PACKAGED",
    "activations",
    "cache_dir",
    "cache_root",
    "cached",
    "check_model",
    "embeddings",
    "encoder_digest",
    "file_sha256",
    "is_default",
    "load_model",
    "locate",
    "model_digest",
    "model_folder",
    "model_label",
    "models_dir",
    "packaged_model",
    "pieces",
    "recompute",
    "sequences",
]
