"""The presentation of ``rfbench lm``: the rows printed after a run."""

from __future__ import annotations

import pandas as pd

from rfbench.present.summaries import register_presentation


@register_presentation("lm")
def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Perplexity / exact with each method in every layer, and passkey recall per length."""
    every = (results["kind"] == "perplexity") & results["layer"].isna()
    ppl = results[every & (results["metric"] == "ppl_ratio")]
    keys = results[(results["kind"] == "passkey") & (results["metric"] == "passkey_recall")]
    cols = ["kind", "estimator", "budget", "tokens", "metric", "value", "stderr"]
    return pd.concat([ppl[cols], keys[cols]], ignore_index=True)
