"""DERF variance comparison, DERF Fig. 1 (right) and Fig. 2 (docs/experiments.md#derf-fig2, #derf-a1
to #derf-a4).

Per regime (:mod:`rfbench.compute.experiments.variance.derf_sets`) and σ, the closed-form relative
variance of one feature (DERF eqs. 7, 9; rfbench.compute.features.theory.derf) is averaged over the
L² pairs of each of ``set_pairs`` pairs of sets, the data-dependent maps fitted on each (DERF eq. 8,
Thms 4.2-4.3); the value is the mean over set pairs ± std/√set_pairs. ``trig`` is the paper's
random-phase map, reported as ``trig-phase@iid``; the registry's [sin, cos] map is ``trig-sincos``.
The Monte Carlo check (``log_rel_var_mc``, :mod:`rfbench.compute.experiments.variance.derf_mc`) has
as stderr the mean over pairs of the delta-method se std((K̂-K)²)/(√N·MSE) (pairs share ω: the
conservative, fully correlated bound); it is meaningful only at small σ, which its ``resolved`` flag
states.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.datasets import available
from rfbench.compute.datasets.errors import DataUnavailable
from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.experiments.chunks import CHUNK_BYTES
from rfbench.compute.experiments.shared import row
from rfbench.compute.experiments.variance.derf_mc import estimator_name, mc_check, mc_resolved
from rfbench.compute.experiments.variance.derf_sets import (
    IMAGE_DIM,
    image_sets,
    missing_data,
    regime_label,
    regime_note,
    sample_sets,
)
from rfbench.compute.experiments.variance.params import Params
from rfbench.compute.features import registry
from rfbench.compute.features.derf import MECHANISMS as FITTED
from rfbench.compute.features.theory.derf import log_relative_variance
from rfbench.compute.schema import VARIANCE_METRICS
from rfbench.compute.stats import standard_error


def fit_params(
    mechanism: str, X: np.ndarray, Y: np.ndarray, rng: np.random.Generator
) -> dict[str, Any] | None:
    """The fitted parameters of a data-dependent mechanism on (X, Y) (DERF eq. 8), else None."""
    if mechanism not in FITTED:
        return None
    est = registry.get(f"{mechanism}@iid", kernel="softmax", m=1)
    return est.sample(rng, X.shape[1], draws=1, fit=(X, Y)).params


@register_experiment
class Variance(Experiment):
    """Log relative variance of TrigRF, PosRF, GERF, ADERF, SDERF, SADERF (DERF Fig. 1-2)."""

    name = "variance"
    description = (
        "DERF Fig. 1-2: closed-form log relative variance of TrigRF/PosRF/GERF/ADERF/SDERF "
        "(+SADERF) on six regimes of point sets, with a Monte Carlo check."
    )
    tagline = "Relative variance of DERF feature maps on six regimes."
    params = Params
    spec_only = True
    profiles = {
        "quick": {
            "sigma": [0.1, 1.0],
            "points": 128,
            "set_pairs": 2,
            "mc_pairs": 6,
            "mc_samples": 10_000,
        },
        "paper": {},
    }

    memory_parameters = ("points", "d", "mc_pairs")

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """One job in float64: the closed forms over all L² pairs (about six L × L arrays), the
        DERF fits' d × d matrices and their eigen- and singular-value decompositions (about 24),
        the sets (L × d, with copies) and the Monte Carlo check's chunks of mc_pairs² estimates."""
        points, d, pairs = config["points"], config["d"], config["mc_pairs"]
        return 4 * CHUNK_BYTES + 8 * (6 * points**2 + 24 * d * d + 8 * points * d + 6 * pairs**2)

    def validate_config(self, config: Mapping[str, Any]) -> None:
        def check(key: str, ok: bool, allowed: str) -> None:
            if not ok:
                raise ConfigError.bad_value(key, config[key], allowed)

        uses_images = any(image_sets(r) for r in config["regimes"])
        check("d", not uses_images or config["d"] == IMAGE_DIM, f"{IMAGE_DIM} for image regimes")
        check("mc_pairs", 1 <= config["mc_pairs"] <= config["points"], "1 ... points")

    def _runnable(self, config: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
        skipped = {r: why for r in config["regimes"] if (why := missing_data(r))}
        kept = [r for r in config["regimes"] if r not in skipped]
        if skipped and (config["on_missing"] == "error" or not kept):
            regime, why = next(iter(skipped.items()))
            absent = [n for n in image_sets(regime) if not available(n)] or [regime]
            raise DataUnavailable(f"regime {regime!r} cannot run: {why}", absent[0])
        return kept, skipped

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        kept, _ = self._runnable(config)
        keys = ("d", "points", "set_pairs", "mechanisms", "power", "reduce", "mc_pairs")
        fixed = {k: config[k] for k in keys}
        mc, top = config["mc_samples"], config["mc_sigma_max"]
        return [
            JobSpec(fixed, regime=regime, sigma=float(sigma), mc_samples=mc if sigma <= top else 0)
            for regime in kept
            for sigma in config["sigma"]
        ]

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        regime, sigma, d, L = spec["regime"], spec["sigma"], spec["d"], spec["points"]
        mechanisms, power, reduce = spec["mechanisms"], spec["power"], spec["reduce"]
        values: dict[str, list[float]] = {m: [] for m in mechanisms}
        mc_rows: list[dict[str, Any]] = []
        for pair in range(spec["set_pairs"]):
            X, Y = sample_sets(rng, regime, sigma, d, L)
            for mech in mechanisms:
                params = fit_params(mech, X, Y, rng)
                values[mech].append(
                    log_relative_variance(mech, params, X, Y, m=1, power=power, reduce=reduce)
                )
                if pair == 0 and spec["mc_samples"]:
                    mc, se, th = mc_check(
                        rng, mech, params, X, Y, spec["mc_pairs"], spec["mc_samples"]
                    )
                    n_mc = spec["mc_samples"]
                    ok = mc_resolved(mech, params, X, Y, n_mc)
                    mc_rows += [
                        row("log_rel_var_mc", mc, se, n_mc, mechanism=mech, resolved=ok),
                        row("log_rel_var_mc_theory", th, None, n_mc, mechanism=mech, resolved=True),
                    ]
        n, metric = spec["set_pairs"], VARIANCE_METRICS[(power, reduce)]
        rows = [  # closed forms, averaged over the set pairs: resolved
            row(metric, np.mean(v), standard_error(v), n, mechanism=mech, resolved=True)
            for mech, v in values.items()
        ]
        common = {"kernel": "softmax", "d": d, "m": 1, "sigma": sigma, "regime": regime}
        common |= {"dataset": regime_label(regime), "points": L, "note": regime_note(regime, L)}
        return [
            {"estimator": estimator_name(r["mechanism"]), **common, **r} for r in rows + mc_rows
        ]

    def finalize(self, rows: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
        """Append one ``skipped`` row (with the reason in ``note``) per regime without data."""
        _, skipped = self._runnable(config)
        extra = [
            {"experiment": self.name, "figure": config["figure"], "estimator": "",
             "kernel": "softmax", "metric": "skipped", "value": 1.0,
             "stderr": None, "n_trials": 0, "d": config["d"], "m": 1, "regime": regime,
             "dataset": "", "mechanism": "", "points": config["points"],
             "note": f"skipped: {why}"}
            for regime, why in skipped.items()
        ]  # fmt: skip
        return pd.concat([rows, pd.DataFrame(extra)], ignore_index=True) if extra else rows
