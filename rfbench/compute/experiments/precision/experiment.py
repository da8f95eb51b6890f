"""Numerical safety of random-feature maps in float64/32/16 and bfloat16 (beyond the papers).

Per estimator and norm r, one job draws the estimator once for a kernel part and once for an
attention part and evaluates every dtype × form of its features
(:mod:`~rfbench.compute.experiments.precision.maps`) on the same draws. Kernel: x, y ∈ R^d, ‖x‖ =
‖y‖ = r at angles θ ∈ [0, π], the pair randomly rotated so that every coordinate is used; errors
against the exact exp(xᵀy) over the finite estimates. Attention: L queries and L keys of norm r in
random directions; the row-normalised weights against softmax in float64. Each metric is described
where it is registered below. An estimator without ``Estimator.dtype_parts`` gets one ``skipped``
row; data-dependent maps (GERF, DERF) are fitted on ({x}, {y_θ}) and on (Q, K); hybrids get m = M //
n base projections and n λ projections (HRF Sec. 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.experiments.metrics import pointwise_metrics
from rfbench.compute.experiments.precision import maps as pm
from rfbench.compute.experiments.precision.params import Params
from rfbench.compute.experiments.shared import make, random_directions, row, sized, widest
from rfbench.compute.features.base import Estimator
from rfbench.compute.features.theory import equal_norm_pair
from rfbench.compute.kernels import log_softmax_kernel
from rfbench.compute.stats import mean_se

NONFINITE = "nonfinite_fraction"
DTYPE_ERR = "dtype_rel_mae"
DTYPE_TO_MC = "dtype_to_mc"
DTYPE_PART = "dtype_to_mc_same_form"
ATTN_NONFINITE = "attn_nonfinite_fraction"
ATTN_TV = "attn_tv"
#: the ``note`` of the skipped row of an estimator without the capability
NO_FORM = "skipped: no reduced-precision form (the estimator does not implement dtype_parts)"


def rotated_pairs(rng: np.random.Generator, r: float, thetas: np.ndarray, d: int) -> tuple:
    """x (1, d) and y_θ (A, d), ‖x‖ = ‖y‖ = r at angles θ, rotated by a random orthogonal Q."""
    x, y = equal_norm_pair(r, thetas, d)
    q, s = np.linalg.qr(rng.standard_normal((d, d)))
    q = q * np.sign(np.diag(s))
    return x[:1] @ q.T, y @ q.T


def _kernel_rows(est: Estimator, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
    thetas = np.linspace(0.0, np.pi, spec["angles"])
    x, y = rotated_pairs(rng, spec["r"], thetas, spec["d"])
    true = np.exp(log_softmax_kernel(x, y)[0])
    draw = est.sample(rng, d=spec["d"], draws=spec["samples"], fit=(x, y))
    ref = pm.kernel_estimate(
        pm.logspace(est, draw, x, "query", "float64"), pm.logspace(est, draw, y, "key", "float64")
    )[:, 0, :]
    # float64 of each form: the reference of the dtype's part (the form's own error apart)
    q64, k64 = pm.pair_forms(est, draw, x, y, "float64", spec["forms"], spec["stabiliser"])
    own = {form: pm.kernel_estimate(q64[form], k64[form])[:, 0, :] for form in spec["forms"]}
    rows = []
    for dtype in spec["dtypes"]:
        args = (dtype, spec["forms"], spec["stabiliser"])
        queries, keys = pm.pair_forms(est, draw, x, y, *args)
        for form in spec["forms"]:
            k_hat = pm.kernel_estimate(queries[form], keys[form])[:, 0, :]
            for i, theta in enumerate(thetas):
                point = {"dtype": dtype, "form": form, "theta": float(theta)}
                rows += _point_rows(k_hat[:, i], ref[:, i], true[i], point, own[form][:, i])
    return rows


def _point_rows(
    k_hat: np.ndarray,
    ref: np.ndarray,
    true: float,
    point: dict[str, Any],
    own: np.ndarray,
) -> list[dict[str, Any]]:
    """The kernel metrics of one (dtype, form, θ): ``ref`` the logspace float64 estimates of the
    same draws, ``own`` the float64 estimates of the same form (for the dtype's part)."""
    n = k_hat.size
    ok = np.isfinite(k_hat)
    p = 1.0 - ok.mean()
    metrics: dict[str, tuple[float, float | None, int]] = {
        NONFINITE: (float(p), float(np.sqrt(p * (1 - p) / n)), n)
    }
    if ok.sum() >= 2:
        stats = pointwise_metrics(k_hat[ok], true)
        for name in ("rel_rmse", "rel_mae"):
            metrics[name] = (*stats[name], int(ok.sum()))
        dev = np.abs(k_hat[ok] - ref[ok]) / true
        mean, se = mean_se(dev)
        metrics[DTYPE_ERR] = (mean, se, dev.size)
        mc = np.sqrt(np.mean((ref - true) ** 2)) / true  # the float64 estimator's relative RMSE
        metrics[DTYPE_TO_MC] = (float(dev.mean() / mc), float(se / mc), dev.size)
        both = ok & np.isfinite(own)
        if both.sum() >= 2:
            part = np.abs(k_hat[both] - own[both]) / true
            mean, se = mean_se(part)
            metrics[DTYPE_PART] = (mean / mc, se / mc, part.size)
    return [row(k, v, se, t, **point) for k, (v, se, t) in metrics.items()]


def _attention_rows(
    est: Estimator, spec: JobSpec, rng: np.random.Generator
) -> list[dict[str, Any]]:
    L, d, r = spec["attention_points"], spec["d"], spec["r"]
    Q, K = random_directions(rng, L, d, r), random_directions(rng, L, d, r)
    logits = Q @ K.T
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    draw = est.sample(rng, d=d, draws=spec["attention_draws"], fit=(Q, K))
    rows = []
    for dtype in spec["dtypes"]:
        args = (dtype, spec["forms"], spec["stabiliser"])
        queries, keys = pm.pair_forms(est, draw, Q, K, *args, global_key=True)
        for form in spec["forms"]:
            P_hat = pm.attention_weights(queries[form], keys[form])
            finite = np.all(np.isfinite(P_hat), axis=-1)
            bad = 1.0 - finite.mean()
            tv = 0.5 * np.abs(P_hat - P).sum(axis=-1)[finite]
            point = {"dtype": dtype, "form": form, "theta": None}
            se = float(np.sqrt(bad * (1 - bad) / finite.size))
            rows.append(row(ATTN_NONFINITE, bad, se, int(finite.size), **point))
            if tv.size >= 2:
                rows.append(row(ATTN_TV, *mean_se(tv), int(tv.size), **point))
    return rows


@register_experiment
class Precision(Experiment):
    """Non-finite fraction and error of feature maps per dtype and form (see module docstring)."""

    name = "precision"
    description = "numerical safety of feature maps in float64/32/16 and bfloat16 (beyond papers)"
    tagline = "Overflow and error of feature maps in 64/32/16-bit floats."
    params = Params
    spec_only = True
    profiles = {
        "quick": {"r": [0.5, 2.0, 3.5, 5.0], "angles": 5, "samples": 100, "attention_draws": 5},
        "paper": {},
    }

    memory_parameters = ("projection_budget", "d", "samples", "angles", "attention_points",
                         "attention_draws")  # fmt: skip
    range_parameters = ("r",)
    probe_overrides = {"samples": 8, "attention_draws": 2, "attention_points": 4}

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """One job in float64: ``samples`` draws of the projections (× d) and ``attention_draws``
        of L × L weights and L × width features, kept in every dtype and form (about six copies),
        the kernel part's features (samples × angles × width) likewise, and d × d matrices (the
        random rotation, the DERF fits: about 20 of them)."""
        width, projections = widest(
            self.estimators(config), config["projection_budget"], config["n"], matched=True
        )
        s, a, d = config["samples"], config["angles"], config["d"]
        draws, points = config["attention_draws"], config["attention_points"]
        kernel_part = 6 * s * (projections * d + a * width) + 20 * d * d
        attention_part = 6 * draws * (points * (width + points) + projections * d)
        return 8 * (kernel_part + attention_part)

    def estimators(self, config: Mapping[str, Any]) -> list[str]:
        return [f"{c}@{w}" for c in config["components"] for w in config["couplings"]]

    def validate_config(self, config: Mapping[str, Any]) -> None:
        for name in self.estimators(config):
            try:
                make(str(name), config["projection_budget"], config["n"])
            except (ValueError, TypeError, KeyError) as exc:
                raise ConfigError(f"estimator {name!r}: {exc}") from None

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        keys = ("dtypes", "forms", "n", "d", "angles", "samples", "attention_points",
                "attention_draws", "stabiliser")  # fmt: skip
        # the job key names the budget m, as before the option was renamed: same seeds and rows
        fixed = {k: config[k] for k in keys} | {"m": config["projection_budget"]}
        return [
            JobSpec(**fixed, estimator=name, r=r)
            for r in config["r"]
            for name in self.estimators(config)
        ]

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> pd.DataFrame:
        est = make(spec["estimator"], spec["m"], spec["n"])
        if est.precision_form:
            rows = _kernel_rows(est, spec, rng) + _attention_rows(est, spec, rng)
        else:  # the estimator cannot say how it computes in a dtype: say so, never guess
            rows = [{"dtype": None, "form": None, "theta": None, "metric": "skipped",
                     "value": 1.0, "stderr": None, "n_trials": 0, "note": NO_FORM}]  # fmt: skip
        out = pd.DataFrame(rows)
        return out.assign(
            estimator=spec["estimator"], kernel="softmax", d=spec["d"], **sized(est, spec["m"]),
            n=est.n, r=spec["r"], weights=est.weights_name,
        )  # fmt: skip
