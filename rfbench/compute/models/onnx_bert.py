"""A BERT encoder exported to ONNX by PyTorch, read back as Hugging Face tensors and a config.

The exporter leaves each linear layer's weight unnamed and transposed, feeding a ``MatMul`` whose
product feeds an ``Add`` with the named bias: following MatMul → Add names every weight
(docs/experiments.md#attention, "A second model"). Needs the optional ``onnx`` package.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

#: the Hugging Face names of a BERT encoder's tensors, after a sentence-transformers prefix
_NAME = re.compile(r"(?:.*\.)?((?:embeddings|encoder)\..*)$")


class OnnxBertError(ValueError):
    """The graph is not a BERT encoder this reader understands (the message says why)."""


def _constants(graph: Any) -> dict[str, np.ndarray]:
    from onnx import numpy_helper

    out = {}
    for node in graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    out[node.output[0]] = numpy_helper.to_array(attr.t)
    return out


def read_onnx_bert(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The tensors of an exported BERT encoder under their Hugging Face names, and its config.

    Parameters
    ----------
    path : Path
        An ``.onnx`` file of a BERT encoder exported by PyTorch (weights inside the file).

    Returns
    -------
    tensors : dict of str to ndarray
        ``embeddings.*`` and ``encoder.layer.N.*`` in the layout of ``BertModel``'s state dict
        (linear weights of shape (out, in)), in the file's dtype.
    config : dict
        A BERT ``config.json``: sizes, layers, heads, positions, vocabulary, epsilon.

    Raises
    ------
    OnnxBertError
        An unnamed weight that feeds no named bias, a name given twice, or no attention scale.
    """
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    init = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    tensors: dict[str, np.ndarray] = {}
    for name, value in init.items():
        m = _NAME.match(name)
        if m:
            tensors[m[1]] = value
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in init or _NAME.match(node.input[1]):
            continue
        biases = [
            b
            for add in consumers.get(node.output[0], [])
            if add.op_type == "Add"
            for b in add.input
            if b in init and b.endswith(".bias") and _NAME.match(b)
        ]
        if len(biases) != 1:
            raise OnnxBertError(f"weight {node.input[1]!r} feeds {len(biases)} named biases, not 1")
        weight = _NAME.match(biases[0])[1].removesuffix(".bias") + ".weight"
        if weight in tensors:
            raise OnnxBertError(f"two weights map to {weight!r}")
        tensors[weight] = np.ascontiguousarray(init[node.input[1]].T)
    weights = {n.input[1] for n in graph.node if n.op_type == "MatMul"}
    unnamed = [n for n in init if not _NAME.match(n) and n not in weights]
    if unnamed:
        raise OnnxBertError(f"initializer {unnamed[0]!r} is neither named nor a mapped weight")
    return tensors, _config(graph, tensors)


def _config(graph: Any, tensors: dict[str, np.ndarray]) -> dict[str, Any]:
    """config.json of the encoder, from the tensors' shapes and the graph's constants."""
    consts = _constants(graph)
    eps = {
        float(np.float32(a.f))
        for n in graph.node
        if n.op_type == "LayerNormalization"
        for a in n.attribute
        if a.name == "epsilon"
    }
    if len(eps) != 1:
        raise OnnxBertError(f"LayerNorm epsilons {sorted(eps)}: expected one value")
    # the attention logits QKᵀ/√d: a Div by a constant whose numerator is a MatMul of two
    # activations (no initializer), the only such Div in a BERT encoder
    products = {
        n.output[0]
        for n in graph.node
        if n.op_type == "MatMul" and not any(i in consts or _NAME.match(i) for i in n.input)
    }
    scales = {
        float(consts[n.input[1]])
        for n in graph.node
        if n.op_type == "Div" and n.input[0] in products and n.input[1] in consts
    }
    if len(scales) != 1:
        raise OnnxBertError(f"attention scales {sorted(scales)}: expected one √d_head")
    d_head = round(scales.pop() ** 2)
    words = tensors["embeddings.word_embeddings.weight"]
    hidden = words.shape[1]
    layers = len({m[1] for k in tensors if (m := re.match(r"encoder\.layer\.(\d+)\.", k))})
    if not d_head or hidden % d_head:
        raise OnnxBertError(f"head size {d_head} does not divide the hidden size {hidden}")
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "hidden_size": hidden,
        "intermediate_size": tensors["encoder.layer.0.intermediate.dense.weight"].shape[0],
        "layer_norm_eps": eps.pop(),
        "max_position_embeddings": tensors["embeddings.position_embeddings.weight"].shape[0],
        "num_attention_heads": hidden // d_head,
        "num_hidden_layers": layers,
        "position_embedding_type": "absolute",
        "type_vocab_size": tensors["embeddings.token_type_embeddings.weight"].shape[0],
        "vocab_size": words.shape[0],
    }
