"""The lm experiment's jobs: perplexity after the swap, and passkey recall.

docs/experiments.md#language-model. A perplexity job swaps one method into every layer, or into
one layer (the others exact: the pass restarts from the exact pass's input to that layer), and
scores the mean next-token loss L over the measured sequences; its rows are the perplexity e^L,
the ratio to exact e^(L − L_exact) and the share of the gap from uniform attention recovered,
(L_uniform − L)/(L_uniform − L_exact), each a mean over draws ± its standard error (random
methods; one draw for a deterministic one). A passkey job scores recall of planted passkeys.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute import models
from rfbench.compute.experiments import JobSpec
from rfbench.compute.experiments.attention.lm import data, passkey
from rfbench.compute.experiments.attention.lm.methods import (
    EXACT,
    UNIFORM,
    Method,
    attention,
    only_in,
    uniform_attention,
)
from rfbench.compute.models import lm
from rfbench.compute.models.llama import LMAttentionFn
from rfbench.compute.stats import standard_error

#: what the rows say about grouped-query attention
GQA_NOTE = "one key-side map per key/value head, shared by its {group} query heads"


def _loss(model: str, seqs: np.ndarray, attend: LMAttentionFn, layer: int | None) -> float:
    """Mean next-token loss over the sequences, the method in every layer (``layer`` None) or in
    ``layer`` alone (restarting from the exact pass's input there)."""
    net = lm.load_lm(model)
    total, count = 0.0, 0
    for ids in seqs:
        if layer is None:
            hidden = net.hidden_states(ids, attend)
        else:
            x = data.exact_pass(model, ids)["inputs"][layer]
            hidden = net.hidden_states(ids, only_in(attend, layer), start=layer, x=x)
        with np.errstate(over="ignore", invalid="ignore"):
            nll = net.token_nll(hidden[:-1], ids[1:])
        total, count = total + float(nll.sum()), count + len(nll)
    return total / count


def exact_loss(model: str, seqs: np.ndarray) -> float:
    """Exact attention's mean loss (from the cached exact passes)."""
    nll = np.concatenate([data.exact_pass(model, ids)["nll"] for ids in seqs])
    return float(nll.mean())


def uniform_loss(model: str, seqs: np.ndarray, layer: int | None) -> float:
    """Uniform attention's mean loss at a scope (every layer, or one), cached."""
    text = " ".join(map(str, seqs.ravel().tolist()))
    scope = "all" if layer is None else f"layer{layer}"
    path, identity = data._identity(model, text, "uniform", seqs.shape, scope)
    arrays = models.cached(
        path, identity,
        lambda: {"loss": np.array(_loss(model, seqs, uniform_attention, layer))},
    )  # fmt: skip
    return float(arrays["loss"])


def _columns(spec: JobSpec, method: Method) -> dict[str, Any]:
    est = method.estimator()
    config = lm.lm_config(spec["model"])
    group = config["heads"] // config["kv_heads"]
    local = method.local
    cols: dict[str, Any] = {
        "kind": spec["kind"], "estimator": method.name, "kernel": "softmax",
        "dataset": spec["model"], "budget": method.features or None,
        "m": est.m if est is not None else None, "causal": True,
        "layer": spec.get("layer"), "tokens": spec["tokens"],
        "d": config["hidden"] // config["heads"],
    }  # fmt: skip
    if est is not None:
        per = est.features_per_projection or 1
        cols["features"] = method.keys() + est.m * per
        cols["note"] = GQA_NOTE.format(group=group)
    if local is not None:
        cols["window"] = method.keys()
        if local.kind != "top-k":
            cols["sinks"] = method.sinks
    return cols


def _stats(values: list[float], computed: int) -> tuple[float, float | None, int]:
    arr = np.array(values, dtype=float)
    ok = arr[np.isfinite(arr)]
    if ok.size == 0:
        return float("nan"), None, 0
    se = standard_error(ok) if computed > 1 and ok.size > 1 else None
    return float(ok.mean()), se, int(ok.size)


def perplexity_rows(spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The rows of one perplexity job (module doc).

    Parameters
    ----------
    spec : JobSpec
        ``model``, ``tokens``, ``sequences``, ``estimator``, ``budget``, ``sinks``, ``draws``,
        ``layer`` (None: every layer), ``fit_tokens`` and ``fit_length`` (the fitting sequences of
        learned maps: data.fit_keys).
    rng : numpy.random.Generator
        One seed per draw.

    Returns
    -------
    list of dict
        ``perplexity``, ``ppl_ratio`` and ``gap_recovered`` rows (and ``fit_seconds`` of a
        learned map's fits).
    """
    model, layer = spec["model"], spec.get("layer")
    method = Method(spec["estimator"], spec["budget"], spec["sinks"])
    seqs = data.held_out(model, spec["tokens"], spec["sequences"])
    exact = exact_loss(model, seqs)
    uniform = uniform_loss(model, seqs, layer)
    fits = data.fits_of(spec)
    if method.name == EXACT:
        losses = [exact]
    elif method.name == UNIFORM:
        losses = [uniform]
    else:
        computed = spec["draws"] if method.random else 1
        losses = []
        for _ in range(computed):
            seed = int(rng.integers(2**63))
            attend = attention(method, seed, fits.data, fits.draw)
            losses.append(_loss(model, seqs, attend, layer))
    n = len(losses)
    base = {**_columns(spec, method), "sequences": spec["sequences"], "text": data.HELD_OUT}
    if method.map_name is not None and method.estimator().data_dependent:
        base["fit_text"] = data.FIT_TEXT
    rows = []
    values = {
        "perplexity": [np.exp(v) for v in losses],
        "ppl_ratio": [np.exp(v - exact) for v in losses],
        "gap_recovered": [(uniform - v) / (uniform - exact) for v in losses],
    }
    broken = int(np.sum(~np.isfinite(losses)))
    if broken:  # e.g. a map whose normaliser is 0 somewhere: the pass's outputs are NaN
        why = f"{broken} of {n} draws gave non-finite outputs (left out)"
        base["note"] = f"{base['note']}; {why}" if base.get("note") else why
    if broken == n:  # no finite pass: one skipped row says why (a value must be finite)
        return [{**base, "metric": "skipped", "value": 1.0, "stderr": None, "n_trials": 0}]
    for metric, vals in values.items():
        mean, se, trials = _stats(vals, n - broken)
        rows.append({**base, "metric": metric, "value": mean, "stderr": se, "n_trials": trials})
    if fits.seconds:
        why = (f"CPU seconds of {len(fits.seconds)} fits (one per layer and key/value head "
               "swapped), measured when fitted, then cached")  # fmt: skip
        rows.append({**base, "metric": "fit_seconds", "value": sum(fits.seconds.values()),
                     "stderr": None, "n_trials": len(fits.seconds), "note": why})  # fmt: skip
    return rows


def passkey_rows(spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The rows of one passkey job: ``passkey_recall`` and ``passkey_token_accuracy`` (means
    over the prompts ± standard errors), the method in every layer.

    Parameters
    ----------
    spec : JobSpec
        ``model``, ``tokens`` (the prompt length), ``trials``, ``estimator``, ``budget``,
        ``sinks``, ``fit_tokens`` and ``fit_length`` (the fitting sequences: data.fit_keys).
    rng : numpy.random.Generator
        The draw of each prompt's method (prompts come from their own seed, the same for every
        method: ``default_rng([length, trial])``).
    """
    model, length = spec["model"], spec["tokens"]
    method = Method(spec["estimator"], spec["budget"], spec["sinks"])
    net = lm.load_lm(model)
    fits = data.fits_of(spec)
    whole, tokens = [], []
    for trial in range(spec["trials"]):
        prompt = passkey.make(
            lambda s: lm.encode(model, s), length, np.random.default_rng([length, trial])
        )
        attend = attention(method, int(rng.integers(2**63)), fits.data, fits.draw)
        with np.errstate(over="ignore", invalid="ignore"):
            hidden = net.hidden_states(prompt.ids, attend)
        n = prompt.answer
        logits = net.logits(hidden[-n - 1 : -1])
        ok = np.argmax(logits, axis=1) == prompt.ids[-n:]
        whole.append(float(ok.all()))
        tokens.append(float(ok.mean()))
    base = {**_columns(spec, method), "text": "passkey (generated)"}
    rows = []
    for metric, vals in (("passkey_recall", whole), ("passkey_token_accuracy", tokens)):
        arr = np.array(vals)
        rows.append({**base, "metric": metric, "value": float(arr.mean()),
                     "stderr": standard_error(arr), "n_trials": len(arr)})  # fmt: skip
    return rows
