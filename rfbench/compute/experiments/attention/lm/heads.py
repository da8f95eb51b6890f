"""The attention study's head-level rows on the language model's causal heads.

docs/experiments.md#language-model. Every method of ``rfbench attention`` on each query head of
one layer (rfbench.compute.experiments.attention.heads.head_rows, causal forms), measured on the
exact pass over the held-out text, with grouped-query attention kept as the model has it: query
head h reads key/value head g = h // group, and every draw — a random map's, a fitted coupling's or
a learned map's — is **one per (layer, key/value head)**, shared by its query heads (each row's
``kv_head`` column names g and its ``note`` says so; a learned map's ``fit_seconds`` row is per
key/value head). Also the causal baselines of each query head (uniform, zero, best rank).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute.experiments import JobSpec
from rfbench.compute.experiments.attention.causal import FORMS
from rfbench.compute.experiments.attention.heads import baseline_rows, head_rows
from rfbench.compute.experiments.attention.lm import data
from rfbench.compute.experiments.attention.lm.methods import learned
from rfbench.compute.features.base import Draw, Estimator
from rfbench.compute.models import lm


class GroupFitter:
    """Draws for :func:`head_rows` shared by the query heads of one key/value head.

    head_rows asks for query head h's draws in head order, the same sequence of requests for
    every head; the first head of a group draws (or fits, through :class:`data.Fits`) and its
    siblings get the very same draws.
    """

    def __init__(self, fits: data.Fits, layer: int, group: int, d: int) -> None:
        self.fits, self.layer, self.group, self.d = fits, layer, group, d
        self._shared: dict[tuple[str, int, int], Draw] = {}
        self._calls: dict[tuple[str, int], int] = {}
        self.costs: dict[tuple[str, int], float] = {}

    def sample(
        self, est: Estimator, gen: np.random.Generator, h: int, draws: int, label: str = ""
    ) -> Draw:
        label = label or est.name
        g = h // self.group
        n = self._calls.get((label, h), 0)
        self._calls[(label, h)] = n + 1
        key = (label, g, n)
        if key not in self._shared:
            if learned(est):
                self._shared[key] = self.fits.draw(est, self.layer, g, draws)
                self.costs[(label, g)] = self.fits.seconds[(est.name, self.layer, g)]
            else:
                fit = self.fits.data(self.layer, g) if est.data_dependent else None
                self._shared[key] = est.sample(gen, d=self.d, draws=draws, fit=fit)
        return self._shared[key]

    def cost_rows(
        self, common: dict[str, Any], columns: dict[str, dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """``fit_seconds`` rows, one per learned method and key/value head (``kv_head`` = g)."""
        return [
            {**common, **columns.get(name, {}), "estimator": name, "kv_head": g,
             "metric": "fit_seconds", "value": seconds, "stderr": None, "n_trials": 1,
             "note": f"CPU seconds of the fit of key/value head {g} (serving query heads "
                     f"{g * self.group}..{(g + 1) * self.group - 1}), measured when fitted"}
            for (name, g), seconds in self.costs.items()
        ]  # fmt: skip


def layer_heads(model: str, tokens: int, layer: int) -> tuple[np.ndarray, ...]:
    """One layer's causal heads on the first ``tokens`` tokens of the held-out text, from the
    exact pass: q (heads, T, d) and k, v repeated to one per query head (query head h reads
    key/value head h // group), float64, and the group size."""
    ids = data.held_out(model, tokens, 1)[0]
    net = lm.load_lm(model)
    x = data.exact_pass(model, ids)["inputs"][layer]
    q, k, v = (a.astype(np.float64) for a in net.qkv(layer, x, net.rope(len(ids))))
    group = q.shape[0] // k.shape[0]
    return q, np.repeat(k, group, axis=0), np.repeat(v, group, axis=0), group


def _base(spec: JobSpec, q: np.ndarray, kind: str) -> dict[str, Any]:
    return {"kind": kind, "dataset": spec.get("dataset", spec["model"]), "layer": spec["layer"],
            "tokens": q.shape[1], "d": q.shape[2], "kernel": "softmax", "causal": True,
            "text": data.HELD_OUT}  # fmt: skip


def _named(rows: list[dict[str, Any]], group: int, kv_heads: int) -> list[dict[str, Any]]:
    """Each row of a query head names its key/value head (``kv_head``, and in the note)."""
    note = f"key/value head h // {group} of {kv_heads}: one draw per key/value head"
    for row in rows:
        if row.get("metric") == "fit_seconds":
            continue  # per key/value head already (GroupFitter.cost_rows)
        row["kv_head"] = row["head"] // group
        row["note"] = f"{row['note']}; {note}" if row.get("note") else note
    return rows


def heads_rows(spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The head-level rows of one (layer, budget) job.

    Parameters
    ----------
    spec : JobSpec
        ``model``, ``tokens``, ``layer``, ``budget``, ``estimators``, ``draws``, ``sinks``,
        ``fit_tokens`` (and ``fit_length``: data.fit_keys), ``significance``, ``matrix_rows``;
        optionally ``max_heads`` (the first N query heads; 0 = all), ``window`` (keys of the
        window methods; 0 = from the budget) and ``dataset`` (default the model's name).
    rng : numpy.random.Generator

    Returns
    -------
    list of dict
        The rows of rfbench.compute.experiments.attention.heads.head_rows, each query head's with
        its ``kv_head``; ``fit_seconds`` rows per key/value head.
    """
    q, k, v, group = layer_heads(spec["model"], spec["tokens"], spec["layer"])
    n = min(spec.get("max_heads") or q.shape[0], q.shape[0])
    fitter = GroupFitter(data.fits_of(spec), spec["layer"], group, q.shape[2])
    base = {**_base(spec, q, "heads"), "fit_text": data.FIT_TEXT}
    job = {**spec, "causal": True, "window": spec.get("window", 0)}
    rows = head_rows(job, base, q[:n], k[:n], v[:n], rng, fitter, FORMS)
    return _named(rows, group, q.shape[0] // group)


def baselines_rows(spec: JobSpec) -> list[dict[str, Any]]:
    """Uniform (the running mean), zero and best-rank baselines and the head statistics of each
    query head of one layer, causal (rfbench.compute.experiments.attention.heads.baseline_rows).

    Parameters
    ----------
    spec : JobSpec
        ``model``, ``tokens``, ``layer``, ``budget`` (the ranks, a tuple), ``matrix_rows``;
        optionally ``max_heads`` and ``dataset`` (as :func:`heads_rows`).
    """
    q, k, v, group = layer_heads(spec["model"], spec["tokens"], spec["layer"])
    n = min(spec.get("max_heads") or q.shape[0], q.shape[0])
    measured = FORMS.matrix_rows(q.shape[1], spec["matrix_rows"])
    base = _base(spec, q, "baselines")
    rows = []
    for h in range(n):
        rows += baseline_rows(
            {**base, "head": h}, q[h], k[h], v[h], list(spec["budget"]), measured, FORMS
        )
    return _named(rows, group, q.shape[0] // group)
