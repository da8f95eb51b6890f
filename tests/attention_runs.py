"""Shared by the report and plot tests of the finding across models and masks: synthetic
``rfbench attention`` results, one per (model, mask), shaped as the experiment writes them."""

from __future__ import annotations

import numpy as np
import pandas as pd

MAPS = ("positive@orf", "hyperbolic@orf", "gerf@orf")


def run_rows(
    model: str = "toy-model",
    causal: bool = False,
    layers: int = 2,
    heads: int = 6,
    uniform: float = 0.8,
    gain: float = 0.0,
    seed: int = 0,
) -> pd.DataFrame:
    """Heads rows of three random maps (error ≈ ``uniform`` − ``gain``, SE 0.01) and two local
    methods at F = 64 and 256 on 512 tokens, uniform attention's baseline rows."""
    rng = np.random.default_rng(seed)
    rows = []
    label = f"{model}@0123456789abcdef" + ("+causal" if causal else "")
    common = {"dataset": label, "tokens": 512, "n_trials": 10}
    common.update({"causal": True} if causal else {})
    for layer in range(layers):
        for head in range(heads):
            u = uniform + 0.05 * rng.standard_normal()
            rows.append({**common, "kind": "baselines", "estimator": "uniform", "value": u,
                         "metric": "out_rel_frob", "layer": layer, "head": head})  # fmt: skip
            for budget in (64, 256):
                levels = {m: u - gain + 0.01 * rng.standard_normal() for m in MAPS}
                levels.update({"window": 0.3 + 0.02 * rng.standard_normal(), "top-k": 0.02})
                for est, value in levels.items():
                    local = {"window": budget} if est == "window" else {}
                    local.update({"top_k": budget} if est == "top-k" else {})
                    rows.append({**common, **local, "kind": "heads", "estimator": est,
                                 "metric": "out_rel_frob", "value": value, "stderr": 0.01,
                                 "layer": layer, "head": head, "budget": budget,
                                 "features": budget, "z_uniform": (u - value) / 0.01})  # fmt: skip
    df = pd.DataFrame(rows)
    df["beats_uniform"] = df["z_uniform"] > 2
    return df
