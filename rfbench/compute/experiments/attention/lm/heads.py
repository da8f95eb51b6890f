"""The attention study's head-level rows on the language model's causal heads.

docs/experiments.md#language-model. Every method of ``rfbench attention`` on each query head of
one layer (rfbench.compute.experiments.attention.heads.head_rows, causal forms), measured on the
exact pass over the held-out text, with grouped-query attention kept as the model has it: query
head h reads key/value head g = h // group, and every draw — a random map's, a fitted coupling's or
a learned map's — is **one per (layer, key/value head)**, shared by its query heads (the rows'
``note`` says so; a learned map's ``fit_seconds`` row is per key/value head).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfbench.compute.experiments import JobSpec
from rfbench.compute.experiments.attention.causal import FORMS
from rfbench.compute.experiments.attention.heads import head_rows
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
            fit = self.fits.data(self.layer, g) if est.data_dependent else None
            if learned(est):
                self._shared[key] = self.fits.draw(est, self.layer, g, fit, draws)
                self.costs[(label, g)] = self.fits.seconds[(est.name, self.layer, g)]
            else:
                self._shared[key] = est.sample(gen, d=self.d, draws=draws, fit=fit)
        return self._shared[key]

    def cost_rows(
        self, common: dict[str, Any], columns: dict[str, dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """``fit_seconds`` rows, one per learned method and key/value head (``head`` = g)."""
        return [
            {**common, **columns.get(name, {}), "estimator": name, "head": g,
             "metric": "fit_seconds", "value": seconds, "stderr": None, "n_trials": 1,
             "note": f"CPU seconds of the fit of key/value head {g} (serving query heads "
                     f"{g * self.group}..{(g + 1) * self.group - 1}), measured when fitted"}
            for (name, g), seconds in self.costs.items()
        ]  # fmt: skip


def heads_rows(spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The head-level rows of one (layer, budget) job.

    Parameters
    ----------
    spec : JobSpec
        ``model``, ``tokens``, ``layer``, ``budget``, ``estimators``, ``draws``, ``sinks``,
        ``fit_tokens``, ``significance``, ``matrix_rows``.
    rng : numpy.random.Generator
    """
    model, layer = spec["model"], spec["layer"]
    ids = data.held_out(model, spec["tokens"], 1)[0]
    net = lm.load_lm(model)
    x = data.exact_pass(model, ids)["inputs"][layer]
    q, k, v = (a.astype(np.float64) for a in net.qkv(layer, x, net.rope(len(ids))))
    group = q.shape[0] // k.shape[0]
    k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)  # query head h reads g
    fitter = GroupFitter(data.Fits(model, spec["fit_tokens"]), layer, group, q.shape[2])
    base = {"kind": "heads", "dataset": model, "layer": layer, "tokens": len(ids),
            "d": q.shape[2], "kernel": "softmax", "causal": True, "text": data.HELD_OUT,
            "fit_text": data.FIT_TEXT}  # fmt: skip
    job = {**spec, "causal": True, "window": 0}
    rows = head_rows(job, base, q, k, v, rng, fitter, FORMS)
    note = f"key/value head h // {group} of {k.shape[0] // group}: one draw per key/value head"
    for row in rows:
        if row.get("metric") != "fit_seconds":
            row["note"] = f"{row['note']}; {note}" if row.get("note") else note
    return rows
